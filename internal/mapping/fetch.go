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
	// Control is set for a transaction marker (kafka.control): Key, Value and Headers are
	// then empty and Marker says what it is.
	Control   bool
	Marker    Marker
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
	version, key, value, ts, envelope, control []byte
	tsKind                                     byte
	seen                                       uint8 // bit per marker, to refuse repeats
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
	if mk.control != nil {
		return controlRecord(m, rec.Timestamp, mk.control)
	}
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

// Marker is a transaction marker read back from Iggy.
type Marker struct {
	ProducerID int64
	Epoch      int16
	Commit     bool
}

// controlRecord reads a marker message (ControlMessage): kafka.control 00 or 01, and the
// producer id and epoch headers.
func controlRecord(m *Stored, ts int64, kind []byte) (Record, error) {
	if len(kind) != 1 || kind[0] > 1 {
		return Record{}, corrupt("kafka.control %x", kind)
	}
	p, err := markerProducer(m.Headers)
	if err != nil {
		return Record{}, err
	}
	p.Commit = kind[0] == 1
	return Record{Control: true, Marker: p, Timestamp: ts}, nil
}

// markerProducer reads kafka.pid and kafka.epoch of a marker; both must be there once.
func markerProducer(block []byte) (Marker, error) {
	var p Marker
	var seen uint8
	for len(block) > 0 {
		h, rest, err := nextHeader(block)
		if err != nil {
			return Marker{}, err
		}
		block = rest
		if h.keyKind != KindString {
			continue
		}
		switch string(h.key) {
		case HeaderProducerID:
			v, err := fixedValue(&h, KindInt64, 8)
			if err != nil || seen&1 != 0 {
				return Marker{}, corrupt("marker %s", h.key)
			}
			seen |= 1
			p.ProducerID = int64(binary.LittleEndian.Uint64(v))
		case HeaderProducerEpoch:
			v, err := fixedValue(&h, KindInt16, 2)
			if err != nil || seen&2 != 0 {
				return Marker{}, corrupt("marker %s", h.key)
			}
			seen |= 2
			p.Epoch = int16(binary.LittleEndian.Uint16(v))
		}
	}
	if seen != 3 {
		return Marker{}, corrupt("marker without producer id and epoch")
	}
	return p, nil
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
	case HeaderControl:
		slot, bit = &mk.control, 32
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

// BatchEncoder builds the Kafka record batches of one Fetch partition straight from polled
// messages, in one pass: one batch of CreateTime timestamps, or with BeginLogAppendTime one
// batch per append millisecond. Reuse one per goroutine: once its buffers have grown, adding a
// message allocates nothing.
type BatchEncoder struct {
	b       kbatch.Builder
	headers []kbatch.RecordHeader
	// appendTime: records carry Iggy's append time; a batch holds one millisecond's records.
	appendTime  bool
	leaderEpoch int32
	batchTime   int64
	// doneLen and doneSize count the records and bytes of the batches finished before the
	// current one.
	doneLen, doneSize int
}

// Begin starts CreateTime batches at the end of dst (see kbatch.Builder.Begin).
func (e *BatchEncoder) Begin(dst []byte, leaderEpoch int32) { e.begin(dst, leaderEpoch, false) }

// BeginLogAppendTime starts LogAppendTime batches at the end of dst: each record's timestamp
// is the Iggy append time of its message (ms), and since Kafka clients give every record of
// a LogAppendTime batch the batch's max timestamp, records of different milliseconds go into
// different batches.
func (e *BatchEncoder) BeginLogAppendTime(dst []byte, leaderEpoch int32) {
	e.begin(dst, leaderEpoch, true)
}

func (e *BatchEncoder) begin(dst []byte, leaderEpoch int32, appendTime bool) {
	e.appendTime, e.leaderEpoch, e.doneLen, e.doneSize = appendTime, leaderEpoch, 0, 0
	e.b.Begin(dst, leaderEpoch)
	if appendTime {
		e.b.SetLogAppendTime()
	}
}

// Len is the number of records added.
func (e *BatchEncoder) Len() int { return e.doneLen + e.b.Len() }

// Size is the size of the batches so far, headers included.
func (e *BatchEncoder) Size() int { return e.doneSize + e.b.Size() }

// Add maps m to a record and appends it, unless the batches would then exceed maxSize bytes
// (maxSize <= 0: no limit); the first record is always added, as Kafka requires (KIP-74).
// It reports whether m was added. A message that cannot be mapped returns a *MessageError
// and leaves the batches as they were.
func (e *BatchEncoder) Add(m *Stored, maxSize int) (bool, error) {
	rec, err := ToRecord(m, e.headers)
	e.headers = rec.Headers
	if err != nil {
		return false, err
	}
	if e.appendTime {
		rec.Timestamp = int64(min(m.Timestamp/1000, math.MaxInt64))
		if e.b.Len() > 0 && rec.Timestamp != e.batchTime {
			e.nextBatch()
		}
		e.batchTime = rec.Timestamp
	}
	off := int64(m.Offset)
	if rec.Control {
		return e.addControl(off, &rec, maxSize), nil
	}
	if maxSize > 0 && e.Len() > 0 &&
		e.Size()+e.b.RecordSize(off, rec.Timestamp, rec.Key, rec.Value, rec.Headers) > maxSize {
		return false, nil // an empty batch begun by nextBatch is dropped by Finish
	}
	if err := e.b.Append(off, rec.Timestamp, rec.Key, rec.Value, rec.Headers); err != nil {
		return false, &MessageError{Offset: m.Offset, Err: err}
	}
	return true, nil
}

// addControl appends a marker as a control batch of its own (Kafka's layout: key = version 0
// and type, 0 abort or 1 commit; value = version 0 and the coordinator epoch), between the
// batches before and after it.
func (e *BatchEncoder) addControl(off int64, rec *Record, maxSize int) bool {
	kind := int16(0)
	if rec.Marker.Commit {
		kind = 1
	}
	key := []byte{0, 0, byte(kind >> 8), byte(kind)}
	value := []byte{0, 0, 0, 0, 0, 0}
	// A control batch costs a batch header on top of its record.
	if maxSize > 0 && e.Len() > 0 && e.Size()+kbatch.HeaderSize+e.b.RecordSize(0, rec.Timestamp, key, value, nil) > maxSize {
		return false
	}
	e.finishBatch()
	e.b.SetProducer(rec.Marker.ProducerID, rec.Marker.Epoch, true, true)
	if err := e.b.Append(off, rec.Timestamp, key, value, nil); err != nil {
		panic(err) // a fresh batch always takes its first record
	}
	e.finishBatch()
	return true
}

// finishBatch finishes the current batch (dropped when empty) and begins another of the
// same kind after it.
func (e *BatchEncoder) finishBatch() {
	if e.b.Len() > 0 {
		e.doneLen += e.b.Len()
		e.doneSize += e.b.Size()
	}
	e.b.Begin(e.b.Finish(), e.leaderEpoch)
	if e.appendTime {
		e.b.SetLogAppendTime()
	}
}

// nextBatch finishes the current batch and begins another after it.
func (e *BatchEncoder) nextBatch() {
	e.doneLen += e.b.Len()
	e.doneSize += e.b.Size()
	e.b.Begin(e.b.Finish(), e.leaderEpoch)
	e.b.SetLogAppendTime()
}

// Finish completes the batches and returns dst with them appended (unchanged when empty).
func (e *BatchEncoder) Finish() []byte { return e.b.Finish() }
