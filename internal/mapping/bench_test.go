package mapping

import (
	"bytes"
	"fmt"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// benchRecords is a 1000-record batch: 16-byte keys, 200-byte values, two headers.
func benchRecords() []trec {
	value := bytes.Repeat([]byte("benchmark value "), 12)
	var recs []trec
	for i := range 1000 {
		recs = append(recs, trec{ts: ts0 + int64(i), key: []byte(fmt.Sprintf("key-%012d", i)), value: value,
			headers: []kbatch.RecordHeader{h("trace", b("abc")), h("type", b("x"))}})
	}
	return recs
}

// toMessages is the Produce hot path after decoding: window, then one Append per record; the
// first record of an idempotent batch goes through AppendFirst.
func toMessages(tb testing.TB, e *Encoder, batch *kbatch.Records, msgs []Message) []Message {
	e.Reset()
	msgs = msgs[:0]
	w := WindowOf(batch)
	p, idempotent := ProducerOf(&batch.Header)
	it := batch.Iter()
	var r kbatch.Record
	for it.Next(&r) {
		var m Message
		var err error
		if idempotent && len(msgs) == 0 {
			m, err = e.AppendFirst(&r, w, p)
		} else {
			m, err = e.Append(&r, w)
		}
		if err != nil {
			tb.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// toBatch is the Fetch hot path: one Add per polled message into one Kafka batch.
func toBatch(tb testing.TB, e *BatchEncoder, dst []byte, polled []Stored) []byte {
	e.Begin(dst[:0], -1)
	for i := range polled {
		if _, err := e.Add(&polled[i], 0); err != nil {
			tb.Fatal(err)
		}
	}
	return e.Finish()
}

// idempotent marks batch as written by an idempotent producer.
func idempotent(batch kbatch.Records) kbatch.Records {
	batch.Header.ProducerID, batch.Header.ProducerEpoch, batch.Header.BaseSequence = 7, 1, 1000
	return batch
}

func TestHotPathsDoNotAllocate(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	batch := kafkaBatch(t, benchRecords())
	var enc Encoder
	var msgs []Message
	for _, batch := range []kbatch.Records{batch, idempotent(batch)} {
		msgs = toMessages(t, &enc, &batch, msgs) // grow the scratch space once
		if n := testing.AllocsPerRun(10, func() { msgs = toMessages(t, &enc, &batch, msgs) }); n != 0 {
			t.Errorf("record → message (producer id %d): %v allocations per 1000-record batch, want 0",
				batch.Header.ProducerID, n)
		}
	}

	polled := stored(msgs, 0, serverTs)
	var be BatchEncoder
	out := toBatch(t, &be, nil, polled)
	if n := testing.AllocsPerRun(10, func() { out = toBatch(t, &be, out, polled) }); n != 0 {
		t.Errorf("message → batch: %v allocations per 1000-message batch, want 0", n)
	}
}

func BenchmarkRecordsToMessages(b *testing.B) {
	benchmarkRecordsToMessages(b, kafkaBatch(b, benchRecords()))
}

func BenchmarkIdempotentRecordsToMessages(b *testing.B) {
	benchmarkRecordsToMessages(b, idempotent(kafkaBatch(b, benchRecords())))
}

func benchmarkRecordsToMessages(b *testing.B, batch kbatch.Records) {
	var enc Encoder
	var msgs []Message
	b.SetBytes(int64(batch.Header.Length) + 12) // the Kafka batch's size
	b.ReportAllocs()
	for b.Loop() {
		msgs = toMessages(b, &enc, &batch, msgs)
	}
}

func BenchmarkMessagesToBatch(b *testing.B) {
	batch := kafkaBatch(b, benchRecords())
	var enc Encoder
	polled := stored(toMessages(b, &enc, &batch, nil), 0, serverTs)
	var be BatchEncoder
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out = toBatch(b, &be, out, polled)
	}
	b.SetBytes(int64(len(out)))
}
