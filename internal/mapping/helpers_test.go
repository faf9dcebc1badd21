package mapping

import (
	"bytes"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// trec is a Kafka record as a test states it.
type trec struct {
	ts         int64
	key, value []byte
	headers    []kbatch.RecordHeader
}

// kafkaBatch encodes recs as a Kafka batch and decodes it back with kbatch, the way the
// Produce path receives them.
func kafkaBatch(t testing.TB, recs []trec) kbatch.Records {
	t.Helper()
	var b kbatch.Builder
	b.Begin(nil, -1)
	for i, r := range recs {
		if err := b.Append(int64(i), r.ts, r.key, r.value, r.headers); err != nil {
			t.Fatal(err)
		}
	}
	batches, err := kbatch.Split(nil, b.Finish())
	if err != nil {
		t.Fatal(err)
	}
	out, err := batches[0].Decode(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// produce maps every record of recs to a message, checking each against Iggy's rules.
func produce(t testing.TB, recs []trec) []Message { t.Helper(); return produceAs(t, recs, nil) }

// produceAs is produce for an idempotent batch of producer p when p is not nil: its first
// message carries the producer headers.
func produceAs(t testing.TB, recs []trec, p *Producer) []Message {
	t.Helper()
	batch := kafkaBatch(t, recs)
	w := WindowOf(&batch)
	var e Encoder
	var msgs []Message
	it := batch.Iter()
	var r kbatch.Record
	for it.Next(&r) {
		var m Message
		var err error
		if p != nil && len(msgs) == 0 {
			m, err = e.AppendFirst(&r, w, *p)
		} else {
			m, err = e.Append(&r, w)
		}
		if err != nil {
			t.Fatal(err)
		}
		checkIggyRules(t, m)
		msgs = append(msgs, Message{m.OriginTimestamp, bytes.Clone(m.Payload), bytes.Clone(m.Headers)})
	}
	checkOneSend(t, msgs)
	return msgs
}

// checkIggyRules checks what the Iggy server checks: a non-empty payload within the limit
// and a user-headers block that parses exactly, within the size limit.
func checkIggyRules(t testing.TB, m Message) {
	t.Helper()
	if len(m.Payload) == 0 || len(m.Payload) > MaxPayloadSize {
		t.Fatalf("payload of %d bytes", len(m.Payload))
	}
	if len(m.Headers) > MaxHeadersSize {
		t.Fatalf("headers block of %d bytes", len(m.Headers))
	}
	for block := m.Headers; len(block) > 0; {
		h, rest, err := nextHeader(block)
		if err != nil {
			t.Fatalf("header block does not parse: %v", err)
		}
		if h.keyKind != KindString {
			t.Fatalf("header %q has key kind %d", h.key, h.keyKind)
		}
		block = rest
	}
}

// checkOneSend checks that the origin timestamps fit one Iggy send.
func checkOneSend(t testing.TB, msgs []Message) {
	t.Helper()
	if len(msgs) == 0 {
		return
	}
	lo, hi := msgs[0].OriginTimestamp, msgs[0].OriginTimestamp
	for _, m := range msgs {
		lo, hi = min(lo, m.OriginTimestamp), max(hi, m.OriginTimestamp)
	}
	if hi-lo > maxSpanMicros {
		t.Fatalf("origin timestamps span %d µs, more than one send holds", hi-lo)
	}
}

// stored turns produced messages into what a poll returns, from offset base on, with the
// server stamping serverTs.
func stored(msgs []Message, base, serverTs uint64) []Stored {
	var out []Stored
	for i, m := range msgs {
		out = append(out, Stored{Offset: base + uint64(i), Timestamp: serverTs, OriginTimestamp: m.OriginTimestamp,
			Payload: m.Payload, Headers: m.Headers})
	}
	return out
}

// fetch builds a Fetch batch from msgs and decodes it with kbatch, as a consumer would.
func fetch(t testing.TB, msgs []Stored) (kbatch.Header, []trec) {
	t.Helper()
	var e BatchEncoder
	e.Begin(nil, -1)
	for i := range msgs {
		if ok, err := e.Add(&msgs[i], 0); err != nil || !ok {
			t.Fatalf("add message %d: %v %v", i, ok, err)
		}
	}
	return decodeKafka(t, e.Finish())
}

func decodeKafka(t testing.TB, raw []byte) (kbatch.Header, []trec) {
	t.Helper()
	batches, err := kbatch.Split(nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(batches) != 1 {
		t.Fatalf("%d batches", len(batches))
	}
	recs, err := batches[0].Decode(nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []trec
	it := recs.Iter()
	var r kbatch.Record
	for it.Next(&r) {
		tr := trec{ts: r.Timestamp, key: r.Key, value: r.Value}
		for h := r.Headers(); ; {
			k, v, ok := h.Next()
			if !ok {
				break
			}
			tr.headers = append(tr.headers, kbatch.RecordHeader{Key: k, Value: v})
		}
		out = append(out, tr)
	}
	return batches[0].Header, out
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func checkSame(t testing.TB, got, want []trec) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ts != w.ts || !sameBytes(g.key, w.key) || !sameBytes(g.value, w.value) || len(g.headers) != len(w.headers) {
			t.Fatalf("record %d:\n got ts=%d key=%.40q(nil=%v) value=%.40q(nil=%v) %d headers\nwant ts=%d key=%.40q(nil=%v) value=%.40q(nil=%v) %d headers",
				i, g.ts, g.key, g.key == nil, g.value, g.value == nil, len(g.headers),
				w.ts, w.key, w.key == nil, w.value, w.value == nil, len(w.headers))
		}
		for j := range w.headers {
			if !bytes.Equal(g.headers[j].Key, w.headers[j].Key) || !sameBytes(g.headers[j].Value, w.headers[j].Value) {
				t.Fatalf("record %d header %d: got %.40q=%.40q(nil=%v), want %.40q=%.40q(nil=%v)", i, j,
					g.headers[j].Key, g.headers[j].Value, g.headers[j].Value == nil,
					w.headers[j].Key, w.headers[j].Value, w.headers[j].Value == nil)
			}
		}
	}
}

// headerMap parses a block into name → (kind, value), failing on repeats.
func headerMap(t testing.TB, block []byte) map[string]userHeader {
	t.Helper()
	out := map[string]userHeader{}
	for len(block) > 0 {
		h, rest, err := nextHeader(block)
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := out[string(h.key)]; dup {
			t.Fatalf("header %q repeated", h.key)
		}
		out[string(h.key)] = h
		block = rest
	}
	return out
}

// block encodes headers given as (keyKind, key, valueKind, value) quadruples.
func block(entries ...any) []byte {
	var out []byte
	for i := 0; i < len(entries); i += 4 {
		key, value := []byte(entries[i+1].(string)), []byte(entries[i+3].(string))
		out = append(out, byte(entries[i].(int)), byte(len(key)), byte(len(key)>>8), 0, 0)
		out = append(out, key...)
		out = append(out, byte(entries[i+2].(int)), byte(len(value)), byte(len(value)>>8), 0, 0)
		out = append(out, value...)
	}
	return out
}
