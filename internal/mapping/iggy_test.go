package mapping

import (
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// TestMessagesFitIggyBatch hands produced messages to the project's Iggy client batch, which
// validates payloads, header blocks and the timestamp span the way the server does.
func TestMessagesFitIggyBatch(t *testing.T) {
	const hour = 3_600_000
	recs := []trec{
		{ts: ts0, key: b("k"), value: b("v"), headers: []kbatch.RecordHeader{h("a", b("1"))}},
		{ts: ts0 + 5*hour, key: []byte{}, headers: []kbatch.RecordHeader{h("a", nil), h("a", b("2"))}},
		{ts: 0, value: []byte{}},
		{ts: -1, value: b("x")},
	}
	first := kafkaBatch(t, recs[:2])
	second := kafkaBatch(t, recs[2:])
	w := WindowOf(&first).Join(WindowOf(&second))
	batch := iggy.NewBatch(0)
	var e Encoder
	for _, recs := range []*kbatch.Records{&first, &second} {
		it := recs.Iter()
		var r kbatch.Record
		for it.Next(&r) {
			m, err := e.Append(&r, w)
			if err != nil {
				t.Fatal(err)
			}
			if err := batch.Add(m.OriginTimestamp, m.Payload, m.Headers); err != nil {
				t.Fatalf("iggy batch refused %+v: %v", m, err)
			}
		}
	}
	if batch.Len() != len(recs) {
		t.Fatalf("batch holds %d messages", batch.Len())
	}
}

func TestWindowJoin(t *testing.T) {
	early, late := NewWindow(1000), NewWindow(2000)
	for _, tc := range []struct{ a, b, want Window }{
		{early, late, early}, {late, early, early}, {Window{}, late, late}, {late, Window{}, late}, {Window{}, Window{}, Window{}},
	} {
		if got := tc.a.Join(tc.b); got != tc.want {
			t.Errorf("%+v.Join(%+v) = %+v, want %+v", tc.a, tc.b, got, tc.want)
		}
	}
}
