package mapping

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// Stored is one message as Iggy returns it from a poll.
type Stored struct {
	Offset          uint64
	Timestamp       uint64 // server append time, µs
	OriginTimestamp uint64 // producer time, µs; 0 when none
	Payload         []byte
	Headers         []byte // encoded user-headers block
}

// Record is the Kafka side of one stored message. Key, Value and Headers alias the message
// and the scratch slice passed to ToRecord. A nil Key or Value is a null one.
type Record struct {
	Timestamp int64 // ms
	Key       []byte
	Value     []byte
	Headers   []kbatch.RecordHeader
}

// ToRecord maps a stored message to a Kafka record, appending its headers to scratch[:0]
// (pass the previous Record's Headers back in to reuse the space). Messages without kafka.v
// come from native Iggy clients: null key, payload as value, every user header under its own
// name. Errors are *MessageError.
func ToRecord(m *Stored, scratch []kbatch.RecordHeader) (Record, error) {
	rec, err := toRecord(m, scratch[:0])
	if err != nil {
		return Record{Headers: rec.Headers}, &MessageError{Offset: m.Offset, Err: err}
	}
	return rec, nil
}

// markers are the gateway headers found on a message.
type markers struct {
	version, key, value, ts, envelope []byte
	tsKind                            byte
	seen                              uint8 // bit per marker, to refuse repeats
}

func toRecord(m *Stored, hdrs []kbatch.RecordHeader) (Record, error) {
	var mk markers
	// One pass: remember the markers and collect every header; which of them are Kafka
	// headers is known only once the whole block says whether kafka.v is present.
	for block := m.Headers; len(block) > 0; {
		h, rest, err := nextHeader(block)
		if err != nil {
			return Record{Headers: hdrs}, err
		}
		block = rest
		if err := mk.note(&h); err != nil {
			return Record{Headers: hdrs}, err
		}
		hdrs = append(hdrs, kbatch.RecordHeader{Key: h.key, Value: h.value})
	}
	if mk.version == nil {
		return Record{Timestamp: millis(m, m.OriginTimestamp), Value: nonNull(m.Payload), Headers: hdrs}, nil
	}
	if !bytes.Equal(mk.version, versionValue) {
		return Record{Headers: hdrs}, fmt.Errorf("%w: kafka.v %x", ErrUnsupportedVersion, mk.version)
	}
	rec := Record{Timestamp: millis(m, m.OriginTimestamp)}
	if mk.ts != nil {
		ts, err := mk.timestamp()
		if err != nil {
			return Record{Headers: hdrs}, err
		}
		if ts == noTimestamp {
			ts = millis(m, 0)
		}
		rec.Timestamp = ts
	}
	if mk.envelope != nil {
		if !bytes.Equal(mk.envelope, envelopeValue) {
			return Record{Headers: hdrs}, fmt.Errorf("%w: kafka.envelope %x", ErrUnsupportedVersion, mk.envelope)
		}
		var err error
		rec.Key, rec.Value, rec.Headers, err = decodeEnvelope(m.Payload, hdrs[:0])
		return rec, err
	}
	rec.Key = mk.key
	switch {
	case mk.value == nil:
		rec.Value = nonNull(m.Payload)
	case bytes.Equal(mk.value, nullMarker):
	case bytes.Equal(mk.value, emptyMarker):
		rec.Value = placeholder[:0]
	default:
		return Record{Headers: hdrs}, corrupt("kafka.value %q", mk.value)
	}
	// Keep only kafka.h.* headers, prefix stripped, in stored order.
	kept := hdrs[:0]
	for _, h := range hdrs {
		if name, ok := bytes.CutPrefix(h.Key, prefix); ok {
			kept = append(kept, kbatch.RecordHeader{Key: name, Value: h.Value})
		}
	}
	rec.Headers = kept
	return rec, nil
}

// note records h if it is a gateway marker (a String key with a reserved name).
func (mk *markers) note(h *userHeader) error {
	if h.keyKind != KindString || !bytes.HasPrefix(h.key, namespace) {
		return nil
	}
	var slot *[]byte
	var bit uint8
	switch string(h.key) {
	case HeaderVersion:
		slot, bit = &mk.version, 1
	case HeaderKey:
		slot, bit = &mk.key, 2
	case HeaderValue:
		slot, bit = &mk.value, 4
	case HeaderTimestamp:
		slot, bit, mk.tsKind = &mk.ts, 8, h.valueKind
	case HeaderEnvelope:
		slot, bit = &mk.envelope, 16
	default:
		return nil
	}
	if mk.seen&bit != 0 {
		return corrupt("header %s repeated", h.key)
	}
	mk.seen |= bit
	*slot = h.value
	return nil
}

// timestamp reads kafka.ts: an Int64 of milliseconds, or "epoch" as earlier upstream
// gateways wrote for a 0 ms timestamp.
func (mk *markers) timestamp() (int64, error) {
	switch {
	case mk.tsKind == KindInt64 && len(mk.ts) == 8:
		return int64(binary.LittleEndian.Uint64(mk.ts)), nil
	case bytes.Equal(mk.ts, legacyEpoch):
		return 0, nil
	}
	return 0, corrupt("kafka.ts of kind %d: %x", mk.tsKind, mk.ts)
}

// nonNull keeps a payload from reading as a null value.
func nonNull(b []byte) []byte {
	if b == nil {
		return placeholder[:0]
	}
	return b
}

// millis is origin (µs) in ms, or the server timestamp when origin is 0.
func millis(m *Stored, origin uint64) int64 {
	if origin == 0 {
		origin = m.Timestamp
	}
	return int64(min(origin/1000, math.MaxInt64))
}

// BatchEncoder builds one Kafka record batch for Fetch straight from polled messages, in one
// pass. Reuse one per goroutine: once its buffers have grown, adding a message allocates
// nothing.
type BatchEncoder struct {
	b       kbatch.Builder
	headers []kbatch.RecordHeader
}

// Begin starts a batch at the end of dst (see kbatch.Builder.Begin).
func (e *BatchEncoder) Begin(dst []byte, leaderEpoch int32) { e.b.Begin(dst, leaderEpoch) }

// Len is the number of records added.
func (e *BatchEncoder) Len() int { return e.b.Len() }

// Size is the size of the batch so far, header included.
func (e *BatchEncoder) Size() int { return e.b.Size() }

// Add maps m to a record and appends it, unless the batch would then exceed maxSize bytes
// (maxSize <= 0: no limit); the first record is always added, as Kafka requires (KIP-74).
// It reports whether m was added. A message that cannot be mapped returns a *MessageError
// and leaves the batch as it was.
func (e *BatchEncoder) Add(m *Stored, maxSize int) (bool, error) {
	rec, err := ToRecord(m, e.headers)
	e.headers = rec.Headers
	if err != nil {
		return false, err
	}
	off := int64(m.Offset)
	if maxSize > 0 && e.b.Len() > 0 &&
		e.b.Size()+e.b.RecordSize(off, rec.Timestamp, rec.Key, rec.Value, rec.Headers) > maxSize {
		return false, nil
	}
	if err := e.b.Append(off, rec.Timestamp, rec.Key, rec.Value, rec.Headers); err != nil {
		return false, &MessageError{Offset: m.Offset, Err: err}
	}
	return true, nil
}

// Finish completes the batch and returns dst with it appended (unchanged when empty).
func (e *BatchEncoder) Finish() []byte { return e.b.Finish() }
