package mapping

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

var testProducer = Producer{ID: 0x0102030405060708, Epoch: 3, BaseSequence: 42, Records: 2}

// TestGoldenProducerHeaders pins the producer headers of an idempotent batch's first message.
func TestGoldenProducerHeaders(t *testing.T) {
	msgs := produceAs(t, []trec{{ts: 1000, key: b("k"), value: b("val")}, {ts: 1000, value: b("v2")}}, &testProducer)
	want := unhex(t, stripComments(`
		02 07000000 6b61666b612e76           01 01000000 01                -- kafka.v 1
		02 09000000 6b61666b612e706964       07 08000000 0807060504030201  -- "kafka.pid", Int64
		02 0b000000 6b61666b612e65706f6368   05 02000000 0300              -- "kafka.epoch", Int16 3
		02 09000000 6b61666b612e736571       06 04000000 2a000000          -- "kafka.seq", Int32 42
		02 0b000000 6b61666b612e636f756e74   06 04000000 02000000          -- "kafka.count", Int32 2
		02 09000000 6b61666b612e6b6579       01 01000000 6b                -- kafka.key "k"`))
	if string(msgs[0].Headers) != string(want) {
		t.Fatalf("first message headers\n got %x\nwant %x", msgs[0].Headers, want)
	}
	if _, has := headerMap(t, msgs[1].Headers)[HeaderProducerID]; has {
		t.Fatal("the second message of the batch carries producer headers")
	}
}

// TestProducerHeadersNeverReachConsumers: an idempotent batch reads back exactly as the same
// batch written without a producer, natively and in an envelope.
func TestProducerHeadersNeverReachConsumers(t *testing.T) {
	for _, recs := range [][]trec{
		{{ts: ts0, key: b("k"), value: b("v"), headers: []kbatch.RecordHeader{h("a", b("1"))}}, {ts: ts0, value: b("w")}},
		{{ts: 0, key: []byte{}, headers: []kbatch.RecordHeader{h("d", b("1")), h("d", nil)}}},
		{{ts: ts0}},
	} {
		plain := produce(t, recs)
		idem := produceAs(t, recs, &testProducer)
		_, got := fetch(t, stored(idem, 7, serverTs))
		_, want := fetch(t, stored(plain, 7, serverTs))
		checkSame(t, got, want)
		checkSame(t, got, withServerTime(recs))
		p, ok, err := ProducerOfMessage(&stored(idem, 7, serverTs)[0])
		if err != nil || !ok || p != testProducer {
			t.Fatalf("ProducerOfMessage = %+v %v %v, want %+v", p, ok, err, testProducer)
		}
	}
}

func withServerTime(recs []trec) []trec {
	out := append([]trec(nil), recs...)
	for i := range out {
		if out[i].ts == noTimestamp {
			out[i].ts = serverTs / 1000
		}
	}
	return out
}

// TestProducerHeadersCountTowardsTheHeaderLimit: a record whose headers fit only without the
// producer headers goes into an envelope when it starts an idempotent batch.
func TestProducerHeadersCountTowardsTheHeaderLimit(t *testing.T) {
	var hs []kbatch.RecordHeader
	entry := headerEntrySize(len(HeaderPrefix)+5, 250)
	for size := headerEntrySize(len(HeaderVersion), 1); size+entry <= MaxHeadersSize; size += entry {
		hs = append(hs, h(fmt.Sprintf("h%04d", len(hs)), bytes.Repeat([]byte{'v'}, 250)))
	}
	recs := []trec{{ts: ts0, value: b("v"), headers: hs}}
	if _, env := headerMap(t, produce(t, recs)[0].Headers)[HeaderEnvelope]; env {
		t.Fatal("test record does not fit natively without producer headers")
	}
	m := produceAs(t, recs, &testProducer)[0] // checks Iggy's limits
	if _, env := headerMap(t, m.Headers)[HeaderEnvelope]; !env {
		t.Fatalf("headers of %d bytes with producer headers, want an envelope", len(m.Headers))
	}
	_, got := fetch(t, stored([]Message{m}, 0, serverTs))
	checkSame(t, got, recs)
}

func TestProducerOf(t *testing.T) {
	hdr := kbatch.Header{ProducerID: 9, ProducerEpoch: 1, BaseSequence: 5, NumRecords: 3}
	if p, ok := ProducerOf(&hdr); !ok || p != (Producer{ID: 9, Epoch: 1, BaseSequence: 5, Records: 3}) {
		t.Fatalf("ProducerOf = %+v %v", p, ok)
	}
	hdr.ProducerID = -1
	if _, ok := ProducerOf(&hdr); ok {
		t.Fatal("a batch without producer id is idempotent")
	}
}

func TestProducerOfMessage(t *testing.T) {
	i64 := func(v uint64) string {
		return string([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24), 0, 0, 0, 0})
	}
	i32 := func(v uint32) string { return string([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}) }
	version := []any{KindString, HeaderVersion, KindRaw, "\x01"}
	pid := []any{KindString, HeaderProducerID, KindInt64, i64(7)}
	epoch := []any{KindString, HeaderProducerEpoch, KindInt16, "\x02\x00"}
	seq := []any{KindString, HeaderSequence, KindInt32, i32(11)}
	count := []any{KindString, HeaderRecords, KindInt32, i32(4)}
	join := func(parts ...[]any) []byte {
		var all []any
		for _, p := range parts {
			all = append(all, p...)
		}
		return block(all...)
	}
	for _, tc := range []struct {
		name    string
		headers []byte
		ok      bool
		corrupt bool
	}{
		{"all four", join(version, pid, epoch, seq, count), true, false},
		{"any order", join(count, seq, version, epoch, pid), true, false},
		{"not idempotent", join(version), false, false},
		{"no headers", nil, false, false},
		{"native message: kafka.* means nothing", join(pid, epoch, seq, count), false, false},
		{"missing one", join(version, pid, epoch, seq), false, true},
		{"repeated", join(version, pid, epoch, seq, count, seq), false, true},
		{"wrong kind", join(version, pid, epoch, []any{KindString, HeaderSequence, KindInt64, i64(11)}, count), false, true},
		{"wrong size", join(version, pid, []any{KindString, HeaderProducerEpoch, KindInt16, "\x02"}, seq, count), false, true},
		{"negative sequence", join(version, pid, epoch, []any{KindString, HeaderSequence, KindInt32, i32(1 << 31)}, count), false, true},
		{"no records", join(version, pid, epoch, seq, []any{KindString, HeaderRecords, KindInt32, i32(0)}), false, true},
		{"corrupt block", []byte{2, 1}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Stored{Offset: 3, Headers: tc.headers}
			p, ok, err := ProducerOfMessage(&m)
			var me *MessageError
			if tc.corrupt != (err != nil) || (err != nil && (!errors.As(err, &me) || me.Offset != 3 || !errors.Is(err, ErrCorrupt))) {
				t.Fatalf("err = %v, want corrupt %v", err, tc.corrupt)
			}
			if ok != tc.ok || (ok && p != Producer{ID: 7, Epoch: 2, BaseSequence: 11, Records: 4}) {
				t.Fatalf("= %+v %v, want ok %v", p, ok, tc.ok)
			}
		})
	}
}
