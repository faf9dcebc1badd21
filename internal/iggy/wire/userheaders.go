package wire

import "encoding/binary"

// User header kinds (key and value kinds share the table).
const (
	HeaderRaw     uint8 = 1
	HeaderString  uint8 = 2
	HeaderBool    uint8 = 3
	HeaderInt8    uint8 = 4
	HeaderInt16   uint8 = 5
	HeaderInt32   uint8 = 6
	HeaderInt64   uint8 = 7
	HeaderInt128  uint8 = 8
	HeaderUint8   uint8 = 9
	HeaderUint16  uint8 = 10
	HeaderUint32  uint8 = 11
	HeaderUint64  uint8 = 12
	HeaderUint128 uint8 = 13
	HeaderFloat32 uint8 = 14
	HeaderFloat64 uint8 = 15
)

// Limits of a user-headers block.
const (
	MaxHeaderFieldLength = 255     // each key and each value: 1..255 bytes
	MaxUserHeadersSize   = 100_000 // whole block
)

// A user-headers block is a sequence of entries
// [key_kind:u8][key_len:u32][key][value_kind:u8][value_len:u32][value] with every length in
// 1..255 and no kind 0. It must parse exactly.

// AppendHeader appends one header entry to a user-headers block. key and value must be 1..255
// bytes and the kinds non-zero; ValidateHeaders checks a finished block.
func AppendHeader(dst []byte, keyKind uint8, key []byte, valueKind uint8, value []byte) []byte {
	dst = appendHeaderField(dst, keyKind, key)
	return appendHeaderField(dst, valueKind, value)
}

func appendHeaderField(dst []byte, kind uint8, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(append(dst, kind), uint32(len(b)))
	return append(dst, b...)
}

// HeaderEntrySize is the encoded size of one entry with the given key and value lengths.
func HeaderEntrySize(keyLen, valueLen int) int { return 10 + keyLen + valueLen }

// ParseHeaders calls fn for each entry of a user-headers block, stopping early when fn returns
// false. The slices alias block. A malformed block is an error, reported before fn sees any
// entry past the damage.
func ParseHeaders(block []byte, fn func(keyKind uint8, key []byte, valueKind uint8, value []byte) bool) error {
	for len(block) > 0 {
		kk, key, rest, err := headerField(block)
		if err != nil {
			return err
		}
		if len(rest) == 0 {
			return formatErr(codeInvalidFormat, "user header key without a value")
		}
		vk, value, rest, err := headerField(rest)
		if err != nil {
			return err
		}
		block = rest
		if !fn(kk, key, vk, value) {
			return nil
		}
	}
	return nil
}

func headerField(b []byte) (kind uint8, field, rest []byte, err error) {
	if len(b) < 5 {
		return 0, nil, nil, truncated("user header field", 5, len(b))
	}
	kind = b[0]
	if kind == 0 {
		return 0, nil, nil, formatErr(codeInvalidHeaderKind, "user header kind 0")
	}
	n := binary.LittleEndian.Uint32(b[1:5])
	if n == 0 || n > MaxHeaderFieldLength {
		return 0, nil, nil, formatErr(codeInvalidFormat, "user header field length %d outside 1..%d", n, MaxHeaderFieldLength)
	}
	if int(n) > len(b)-5 {
		return 0, nil, nil, truncated("user header field", int(n), len(b)-5)
	}
	return kind, b[5 : 5+n : 5+n], b[5+n:], nil
}

// ValidateHeaders checks a whole user-headers block: size limit, structure and field limits.
func ValidateHeaders(block []byte) error {
	if len(block) > MaxUserHeadersSize {
		return formatErr(codeTooBigUserHeaders, "user headers block of %d bytes exceeds %d", len(block), MaxUserHeadersSize)
	}
	return ParseHeaders(block, func(uint8, []byte, uint8, []byte) bool { return true })
}
