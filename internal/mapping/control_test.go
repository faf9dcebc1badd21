package mapping

import (
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// A marker between two records is served as a control batch of its own, with the producer
// id and epoch and Kafka's control record, between batches of the records around it.
func TestControlMarkerBecomesControlBatch(t *testing.T) {
	var enc Encoder
	rec := kbatch.Record{Value: []byte("v"), Timestamp: 5}
	m, err := enc.Append(&rec, NewWindow(5))
	if err != nil {
		t.Fatal(err)
	}
	data := Stored{Offset: 0, OriginTimestamp: m.OriginTimestamp, Payload: append([]byte(nil), m.Payload...), Headers: append([]byte(nil), m.Headers...)}
	payload, headers := ControlMessage(77, 3, true)
	ctl := Stored{Offset: 1, OriginTimestamp: 5000, Payload: payload, Headers: headers}
	after := data
	after.Offset = 2

	var be BatchEncoder
	be.Begin(nil, 0)
	for _, s := range []Stored{data, ctl, after} {
		if ok, err := be.Add(&s, 0); err != nil || !ok {
			t.Fatalf("add %d: %v %v", s.Offset, ok, err)
		}
	}
	if be.Len() != 3 {
		t.Fatalf("len %d", be.Len())
	}
	out := be.Finish()
	if be.Size() != len(out) {
		t.Fatalf("size %d, batches %d bytes", be.Size(), len(out))
	}
	batches, err := kbatch.Split(nil, out)
	if err != nil || len(batches) != 3 {
		t.Fatalf("split: %d batches, %v", len(batches), err)
	}
	h := batches[1].Header
	if !h.Control() || !h.Transactional() || h.ProducerID != 77 || h.ProducerEpoch != 3 || h.BaseOffset != 1 || h.NumRecords != 1 {
		t.Fatalf("control batch header %+v", h)
	}
	recs, err := batches[1].Decode(kbatch.NewBudget(1 << 20))
	if err != nil {
		t.Fatal(err)
	}
	defer recs.Release()
	var r kbatch.Record
	it := recs.Iter()
	if !it.Next(&r) || string(r.Key) != "\x00\x00\x00\x01" {
		t.Fatalf("control record key %x", r.Key)
	}
	for i, b := range []kbatch.Batch{batches[0], batches[2]} {
		if b.Header.Control() || b.Header.ProducerID != -1 {
			t.Fatalf("data batch %d: %+v", i, b.Header)
		}
	}
}

// The first message of a transactional batch carries kafka.txn after the producer headers,
// and still reads back as the same record and the same producer.
func TestTransactionalHeader(t *testing.T) {
	var enc Encoder
	rec := kbatch.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: 5}
	p := Producer{ID: 9, Epoch: 1, BaseSequence: 0, Records: 1, Transactional: true}
	m, err := enc.AppendFirst(&rec, NewWindow(5), p)
	if err != nil {
		t.Fatal(err)
	}
	s := Stored{OriginTimestamp: m.OriginTimestamp, Payload: m.Payload, Headers: m.Headers}
	got, ok, err := ProducerOfMessage(&s)
	if err != nil || !ok || got.ID != 9 || got.Epoch != 1 {
		t.Fatalf("producer %+v %v %v", got, ok, err)
	}
	found := false
	for block := m.Headers; len(block) > 0; {
		h, rest, err := nextHeader(block)
		if err != nil {
			t.Fatal(err)
		}
		block = rest
		found = found || (string(h.key) == HeaderTransactional && string(h.value) == "\x01")
	}
	if !found {
		t.Fatal("no kafka.txn header")
	}
	r, err := ToRecord(&s, nil)
	if err != nil || r.Control || string(r.Key) != "k" || len(r.Headers) != 0 {
		t.Fatalf("record %+v %v", r, err)
	}
}

// TransactionalMessage tells the first message of a transactional batch from an idempotent
// one and from a marker.
func TestTransactionalMessage(t *testing.T) {
	var enc Encoder
	rec := kbatch.Record{Value: []byte("v"), Timestamp: 5}
	for _, txn := range []bool{true, false} {
		m, err := enc.AppendFirst(&rec, NewWindow(5), Producer{ID: 9, Epoch: 1, Records: 1, Transactional: txn})
		if err != nil {
			t.Fatal(err)
		}
		s := Stored{Payload: m.Payload, Headers: append([]byte(nil), m.Headers...)}
		enc.Reset()
		if got := TransactionalMessage(&s); got != txn {
			t.Fatalf("transactional %v read as %v", txn, got)
		}
	}
	payload, headers := ControlMessage(9, 1, false)
	if TransactionalMessage(&Stored{Payload: payload, Headers: headers}) {
		t.Fatal("a marker read as a transactional batch")
	}
}
