package mapping

import (
	"encoding/binary"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// Envelope payload layout (version 1, little-endian, the upstream gateway's layout):
//
//	u8  flags            bit 0: key present, bit 1: value present, other bits 0
//	u32 key_len          0 when the key is absent
//	..  key
//	u32 value_len        0 when the value is absent
//	..  value
//	u32 header_count
//	    header_count times, in record order:
//	    u32 name_len
//	    ..  name
//	    u8  value_present  0 or 1
//	    u32 value_len      0 when the value is absent
//	    ..  value
const (
	flagKey   = 1 << 0
	flagValue = 1 << 1

	envelopeFixedSize  = 13 // flags, key_len, value_len, header_count
	envelopeHeaderSize = 9  // name_len, value_present, value_len
)

// envelopeSize is the exact size of rec's envelope.
func envelopeSize(rec *kbatch.Record) int {
	size := envelopeFixedSize + len(rec.Key) + len(rec.Value)
	for h := rec.Headers(); ; {
		name, value, ok := h.Next()
		if !ok {
			return size
		}
		size += envelopeHeaderSize + len(name) + len(value)
	}
}

func (e *Encoder) appendEnvelope(m Message, rec *kbatch.Record, tsHeader bool, p *Producer) (Message, error) {
	if envelopeSize(rec) > MaxPayloadSize {
		return Message{}, ErrTooLarge
	}
	start := len(e.buf)
	var flags byte
	if rec.Key != nil {
		flags |= flagKey
	}
	if rec.Value != nil {
		flags |= flagValue
	}
	e.buf = append(e.buf, flags)
	e.buf = appendField(e.buf, rec.Key)
	e.buf = appendField(e.buf, rec.Value)
	e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(rec.NumHeaders))
	for h := rec.Headers(); ; {
		name, value, ok := h.Next()
		if !ok {
			break
		}
		e.buf = appendField(e.buf, name)
		present := byte(0)
		if value != nil {
			present = 1
		}
		e.buf = append(e.buf, present)
		e.buf = appendField(e.buf, value)
	}
	payloadEnd := len(e.buf)
	e.buf = e.appendGatewayHeaders(e.buf, rec.Timestamp, tsHeader, p)
	e.buf = appendHeader(e.buf, HeaderEnvelope, KindRaw, envelopeValue)
	m.Payload = e.buf[start:payloadEnd:payloadEnd]
	m.Headers = e.buf[payloadEnd:len(e.buf):len(e.buf)]
	return m, nil
}

func appendField(dst, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// decodeEnvelope parses an envelope payload, appending its headers to hdrs. Every length is
// checked against the bytes that remain, and nothing may follow the last header.
func decodeEnvelope(p []byte, hdrs []kbatch.RecordHeader) (key, value []byte, _ []kbatch.RecordHeader, err error) {
	if len(p) < 1 {
		return nil, nil, hdrs, corrupt("empty envelope")
	}
	flags := p[0]
	if flags&^(flagKey|flagValue) != 0 {
		return nil, nil, hdrs, corrupt("envelope flags %#x", flags)
	}
	p = p[1:]
	if key, p, err = takeField(p, flags&flagKey != 0); err != nil {
		return nil, nil, hdrs, err
	}
	if value, p, err = takeField(p, flags&flagValue != 0); err != nil {
		return nil, nil, hdrs, err
	}
	if len(p) < 4 {
		return nil, nil, hdrs, corrupt("envelope truncated before its header count")
	}
	count := binary.LittleEndian.Uint32(p)
	p = p[4:]
	if uint64(count)*envelopeHeaderSize > uint64(len(p)) {
		return nil, nil, hdrs, corrupt("envelope declares %d headers in %d bytes", count, len(p))
	}
	for range count {
		var name, hv []byte
		if name, p, err = takeField(p, true); err != nil {
			return nil, nil, hdrs, err
		}
		if len(p) < 1 || p[0] > 1 {
			return nil, nil, hdrs, corrupt("bad envelope header presence byte")
		}
		present := p[0] == 1
		if hv, p, err = takeField(p[1:], present); err != nil {
			return nil, nil, hdrs, err
		}
		hdrs = append(hdrs, kbatch.RecordHeader{Key: name, Value: hv})
	}
	if len(p) != 0 {
		return nil, nil, hdrs, corrupt("%d bytes after the envelope's last header", len(p))
	}
	return key, value, hdrs, nil
}

// takeField reads a u32-length-prefixed field. An absent field must have length 0 and comes
// back nil; a present one comes back non-nil even when empty.
func takeField(p []byte, present bool) (field, rest []byte, err error) {
	if len(p) < 4 {
		return nil, nil, corrupt("envelope field length truncated")
	}
	n := binary.LittleEndian.Uint32(p)
	p = p[4:]
	if uint64(n) > uint64(len(p)) || (!present && n != 0) {
		return nil, nil, corrupt("envelope field of %d bytes (present %v) with %d left", n, present, len(p))
	}
	if !present {
		return nil, p, nil
	}
	return p[:n:n], p[n:], nil
}
