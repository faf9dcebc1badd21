package mapping

import "encoding/binary"

// Iggy header kinds this package writes. Kinds run from 1 to 15; 0 is invalid.
const (
	KindRaw    = 1
	KindString = 2
	KindInt16  = 5
	KindInt32  = 6
	KindInt64  = 7

	maxKind = 15
)

// headerEntrySize is the encoded size of one user header with key and value lengths k, v:
// [key_kind:u8][key_len:u32][key][val_kind:u8][val_len:u32][val].
func headerEntrySize(k, v int) int { return 10 + k + v }

// appendHeader appends one user header with a String key. The caller guarantees both
// lengths are within 1..MaxHeaderField.
func appendHeader(dst []byte, key string, valueKind byte, value []byte) []byte {
	dst = append(dst, KindString)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(key)))
	dst = append(dst, key...)
	dst = append(dst, valueKind)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(value)))
	return append(dst, value...)
}

// appendPrefixedHeader appends a String-keyed header whose key is HeaderPrefix+name and whose
// value is Raw.
func appendPrefixedHeader(dst, name, value []byte) []byte {
	dst = append(dst, KindString)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(HeaderPrefix)+len(name)))
	dst = append(dst, HeaderPrefix...)
	dst = append(dst, name...)
	dst = append(dst, KindRaw)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(value)))
	return append(dst, value...)
}

// userHeader is one parsed user header; key and value alias the block.
type userHeader struct {
	keyKind, valueKind byte
	key, value         []byte
}

// nextHeader parses the first header of block, checking it the way the Iggy server does:
// kinds 1..15, key and value 1..255 bytes, and no entry running past the block.
func nextHeader(block []byte) (h userHeader, rest []byte, err error) {
	if len(block) < 5 {
		return h, nil, corrupt("user header truncated")
	}
	h.keyKind = block[0]
	kl := binary.LittleEndian.Uint32(block[1:])
	block = block[5:]
	if h.keyKind == 0 || h.keyKind > maxKind || kl == 0 || kl > MaxHeaderField || int(kl)+5 > len(block) {
		return h, nil, corrupt("bad user header key (kind %d, %d bytes)", h.keyKind, kl)
	}
	h.key, block = block[:kl:kl], block[kl:]
	h.valueKind = block[0]
	vl := binary.LittleEndian.Uint32(block[1:])
	block = block[5:]
	if h.valueKind == 0 || h.valueKind > maxKind || vl == 0 || vl > MaxHeaderField || int(vl) > len(block) {
		return h, nil, corrupt("bad user header value (kind %d, %d bytes)", h.valueKind, vl)
	}
	h.value, block = block[:vl:vl], block[vl:]
	return h, block, nil
}
