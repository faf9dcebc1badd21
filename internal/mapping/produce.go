package mapping

import (
	"bytes"
	"encoding/binary"
	"slices"
	"unicode/utf8"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// Message is the Iggy side of one record: what an Iggy send takes.
type Message struct {
	OriginTimestamp uint64 // µs
	Payload         []byte
	Headers         []byte // encoded user-headers block
}

// Encoder turns Kafka records into Iggy messages. It owns the scratch space that header
// blocks and envelope payloads are written to; reuse one Encoder per goroutine.
type Encoder struct {
	buf   []byte
	names [][]byte
}

// Reset forgets everything returned so far, so the scratch space is reused.
func (e *Encoder) Reset() { e.buf = e.buf[:0] }

// Append maps rec (a record of a batch decoded by kbatch) to a message stored within w (see
// WindowOf). The returned slices alias rec.Value or the Encoder's scratch space, and stay
// valid until Reset. It fails only with ErrTooLarge.
func (e *Encoder) Append(rec *kbatch.Record, w Window) (Message, error) {
	return e.append(rec, w, nil)
}

// AppendFirst is Append for the first record of an idempotent batch: the message also carries
// the batch's producer (see ProducerOf).
func (e *Encoder) AppendFirst(rec *kbatch.Record, w Window, p Producer) (Message, error) {
	return e.append(rec, w, &p)
}

func (e *Encoder) append(rec *kbatch.Record, w Window, p *Producer) (Message, error) {
	origin, tsHeader := w.stamp(rec.Timestamp)
	m := Message{OriginTimestamp: origin}
	if e.needsEnvelope(rec, tsHeader, p) {
		return e.appendEnvelope(m, rec, tsHeader, p)
	}
	if len(rec.Value) > MaxPayloadSize {
		return Message{}, ErrTooLarge
	}
	start := len(e.buf)
	e.buf = e.appendGatewayHeaders(e.buf, rec.Timestamp, tsHeader, p)
	switch {
	case rec.Value == nil:
		m.Payload = placeholder
		e.buf = appendHeader(e.buf, HeaderValue, KindRaw, nullMarker)
	case len(rec.Value) == 0:
		m.Payload = placeholder
		e.buf = appendHeader(e.buf, HeaderValue, KindRaw, emptyMarker)
	default:
		m.Payload = rec.Value
	}
	if rec.Key != nil {
		e.buf = appendHeader(e.buf, HeaderKey, KindRaw, rec.Key)
	}
	for h := rec.Headers(); ; {
		name, value, ok := h.Next()
		if !ok {
			break
		}
		e.buf = appendPrefixedHeader(e.buf, name, value)
	}
	m.Headers = e.buf[start:len(e.buf):len(e.buf)]
	return m, nil
}

// appendGatewayHeaders appends kafka.v, kafka.ts when needed, and the producer headers when p
// is not nil.
func (e *Encoder) appendGatewayHeaders(dst []byte, millis int64, tsHeader bool, p *Producer) []byte {
	dst = appendHeader(dst, HeaderVersion, KindRaw, versionValue)
	if tsHeader {
		var ts [8]byte
		binary.LittleEndian.PutUint64(ts[:], uint64(millis))
		dst = appendHeader(dst, HeaderTimestamp, KindInt64, ts[:])
	}
	if p != nil {
		dst = appendProducerHeaders(dst, p)
	}
	return dst
}

// needsEnvelope reports whether rec has something Iggy headers cannot hold: an empty or
// over-long key, a header name over-long once prefixed or not valid UTF-8 (it becomes a
// String-kind key), a null, empty or over-long header value, a repeated header name, or a
// header block over MaxHeadersSize (producer headers included).
func (e *Encoder) needsEnvelope(rec *kbatch.Record, tsHeader bool, p *Producer) bool {
	if rec.Key != nil && (len(rec.Key) == 0 || len(rec.Key) > MaxHeaderField) {
		return true
	}
	size := headerEntrySize(len(HeaderVersion), len(versionValue))
	if tsHeader {
		size += headerEntrySize(len(HeaderTimestamp), 8)
	}
	if p != nil {
		size += p.headersSize()
	}
	switch {
	case rec.Value == nil:
		size += headerEntrySize(len(HeaderValue), len(nullMarker))
	case len(rec.Value) == 0:
		size += headerEntrySize(len(HeaderValue), len(emptyMarker))
	}
	if rec.Key != nil {
		size += headerEntrySize(len(HeaderKey), len(rec.Key))
	}
	e.names = e.names[:0]
	for h := rec.Headers(); ; {
		name, value, ok := h.Next()
		if !ok {
			break
		}
		if len(HeaderPrefix)+len(name) > MaxHeaderField || len(value) == 0 || len(value) > MaxHeaderField ||
			!utf8.Valid(name) {
			return true
		}
		size += headerEntrySize(len(HeaderPrefix)+len(name), len(value))
		e.names = append(e.names, name)
	}
	if size > MaxHeadersSize {
		return true
	}
	if len(e.names) > 1 {
		slices.SortFunc(e.names, bytes.Compare)
		for i := 1; i < len(e.names); i++ {
			if bytes.Equal(e.names[i-1], e.names[i]) {
				return true
			}
		}
	}
	return false
}
