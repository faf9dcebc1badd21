package mapping

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

const (
	ts0      = 1_700_000_000_123 // a CreateTime in ms
	serverTs = 1_800_000_000_000_000
)

func h(name string, value []byte) kbatch.RecordHeader {
	return kbatch.RecordHeader{Key: []byte(name), Value: value}
}

func b(s string) []byte { return []byte(s) }

func TestRoundTrip(t *testing.T) {
	manyHeaders := func(n, size int) []kbatch.RecordHeader {
		var hs []kbatch.RecordHeader
		for i := range n {
			hs = append(hs, h(fmt.Sprintf("h%04d", i), bytes.Repeat([]byte{'v'}, size)))
		}
		return hs
	}
	for _, tc := range []struct {
		name     string
		rec      trec
		envelope bool
	}{
		{"key and value", trec{ts: ts0, key: b("k"), value: b("v")}, false},
		{"null key", trec{ts: ts0, value: b("v")}, false},
		{"null value", trec{ts: ts0, key: b("k")}, false},
		{"empty value", trec{ts: ts0, key: b("k"), value: []byte{}}, false},
		{"null key and value", trec{ts: ts0}, false},
		{"empty key", trec{ts: ts0, key: []byte{}, value: b("v")}, true},
		{"empty key null value", trec{ts: ts0, key: []byte{}}, true},
		{"1 MiB value", trec{ts: ts0, key: b("k"), value: bytes.Repeat([]byte{7}, 1<<20)}, false},
		{"key of 255", trec{ts: ts0, key: bytes.Repeat([]byte{'k'}, 255), value: b("v")}, false},
		{"key of 256", trec{ts: ts0, key: bytes.Repeat([]byte{'k'}, 256), value: b("v")}, true},
		{"headers", trec{ts: ts0, value: b("v"), headers: []kbatch.RecordHeader{h("b", b("2")), h("a", b("1")), h("", b("e"))}}, false},
		{"header name of 247", trec{ts: ts0, value: b("v"), headers: []kbatch.RecordHeader{h(strings.Repeat("n", 247), b("1"))}}, false},
		{"header name of 248", trec{ts: ts0, value: b("v"), headers: []kbatch.RecordHeader{h(strings.Repeat("n", 248), b("1"))}}, true},
		{"header value of 255", trec{ts: ts0, value: b("v"), headers: []kbatch.RecordHeader{h("a", bytes.Repeat([]byte{1}, 255))}}, false},
		{"header value of 256", trec{ts: ts0, value: b("v"), headers: []kbatch.RecordHeader{h("a", bytes.Repeat([]byte{1}, 256))}}, true},
		{"null header value", trec{ts: ts0, value: b("v"), headers: []kbatch.RecordHeader{h("a", b("1")), h("n", nil)}}, true},
		{"empty header value", trec{ts: ts0, value: b("v"), headers: []kbatch.RecordHeader{h("e", []byte{})}}, true},
		{"duplicate header names", trec{ts: ts0, value: b("v"), headers: []kbatch.RecordHeader{h("d", b("1")), h("x", b("y")), h("d", b("2"))}}, true},
		{"non-UTF-8 header name", trec{ts: ts0, value: b("v"), headers: []kbatch.RecordHeader{h("\xff\xfe", b("1"))}}, true},
		{"header block at the limit", trec{ts: ts0, value: b("v"), headers: manyHeaders(366, 250)}, false},
		{"header block over the limit", trec{ts: ts0, value: b("v"), headers: manyHeaders(400, 250)}, true},
		{"timestamp 0", trec{ts: 0, key: b("k"), value: b("v")}, false},
		{"negative timestamp", trec{ts: -5, value: b("v")}, false},
		{"enveloped timestamp 0", trec{ts: 0, key: []byte{}, value: b("v")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := produce(t, []trec{tc.rec})
			hm := headerMap(t, msgs[0].Headers)
			if v := hm[HeaderVersion]; !bytes.Equal(v.value, []byte{1}) || v.valueKind != KindRaw {
				t.Fatalf("kafka.v = %+v", v)
			}
			if _, env := hm[HeaderEnvelope]; env != tc.envelope {
				t.Fatalf("envelope %v, want %v", env, tc.envelope)
			}
			_, got := fetch(t, stored(msgs, 40, serverTs))
			checkSame(t, got, []trec{tc.rec})
		})
	}
}

func TestRoundTripNoTimestamp(t *testing.T) {
	// -1 (no timestamp) reads back as the server's append time, like LogAppendTime.
	for _, recs := range [][]trec{
		{{ts: -1, value: b("alone")}},
		{{ts: ts0, value: b("stamped")}, {ts: -1, value: b("unstamped")}},
	} {
		msgs := produce(t, recs)
		_, got := fetch(t, stored(msgs, 0, serverTs))
		if got[len(got)-1].ts != serverTs/1000 {
			t.Fatalf("got %d, want the server time %d", got[len(got)-1].ts, serverTs/1000)
		}
	}
}

func TestRoundTripManyRecords(t *testing.T) {
	var recs []trec
	for i := range 10_000 {
		r := trec{ts: ts0 + int64(i%500)*1000, key: []byte(fmt.Sprintf("key-%d", i)), value: []byte(fmt.Sprintf("value-%d", i))}
		switch i % 5 {
		case 1:
			r.value = nil
		case 2:
			r.key = []byte{}
		case 3:
			r.headers = []kbatch.RecordHeader{h("a", b("1")), h("a", b("2"))}
		case 4:
			r.headers = []kbatch.RecordHeader{h("trace", []byte(fmt.Sprint(i)))}
		}
		recs = append(recs, r)
	}
	msgs := produce(t, recs)
	hdr, got := fetch(t, stored(msgs, 1_000_000, serverTs))
	checkSame(t, got, recs)
	if hdr.BaseOffset != 1_000_000 || hdr.LastOffsetDelta != 9_999 || hdr.NumRecords != 10_000 {
		t.Fatalf("header %+v", hdr)
	}
}

func TestTimestampWindow(t *testing.T) {
	const minute = 60_000
	recs := []trec{
		{ts: ts0 + 30*minute, value: b("inside")},
		{ts: ts0, value: b("earliest")},
		{ts: ts0 + 120*minute, value: b("past the window's end")},
		{ts: 0, value: b("epoch")},
		{ts: -1, value: b("no timestamp")},
		{ts: -7, value: b("negative")},
	}
	msgs := produce(t, recs) // also checks that the span fits one send
	start := uint64(ts0) * 1000
	for i, want := range []struct {
		origin uint64
		ts     bool
	}{
		{start + 30*minute*1000, false},
		{start, false},
		{start + maxSpanMicros, true},
		{start, true},
		{start, true},
		{start, true},
	} {
		_, hasTs := headerMap(t, msgs[i].Headers)[HeaderTimestamp]
		if msgs[i].OriginTimestamp != want.origin || hasTs != want.ts {
			t.Errorf("record %d: origin %d kafka.ts %v; want %d %v", i, msgs[i].OriginTimestamp, hasTs, want.origin, want.ts)
		}
	}
	_, got := fetch(t, stored(msgs, 0, serverTs))
	recs[4].ts = serverTs / 1000 // no timestamp reads back as the append time
	checkSame(t, got, recs)
}

func TestZeroWindowClampsNothing(t *testing.T) {
	batch := kafkaBatch(t, []trec{{ts: ts0, value: b("v")}})
	var r kbatch.Record
	it := batch.Iter()
	it.Next(&r)
	var e Encoder
	m, err := e.Append(&r, Window{})
	if err != nil || m.OriginTimestamp != ts0*1000 {
		t.Fatalf("origin %d, %v", m.OriginTimestamp, err)
	}
	if _, ok := headerMap(t, m.Headers)[HeaderTimestamp]; ok {
		t.Fatal("kafka.ts written for an exact timestamp")
	}
}

func TestEncoderResultsStayValidUntilReset(t *testing.T) {
	batch := kafkaBatch(t, []trec{{ts: ts0, key: b("k1"), value: b("v1")}, {ts: ts0, key: []byte{}, value: b("v2")}})
	var e Encoder
	var msgs []Message
	it := batch.Iter()
	var r kbatch.Record
	for it.Next(&r) {
		m, err := e.Append(&r, WindowOf(&batch))
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m) // not copied: must survive the next Append
	}
	_, got := fetch(t, stored(msgs, 0, serverTs))
	checkSame(t, got, []trec{{ts: ts0, key: b("k1"), value: b("v1")}, {ts: ts0, key: []byte{}, value: b("v2")}})
}

func TestTooLarge(t *testing.T) {
	big := make([]byte, MaxPayloadSize+1)
	for _, rec := range []trec{
		{ts: ts0, value: big}, // native payload over the limit
		{ts: ts0, key: []byte{}, value: big[:MaxPayloadSize]}, // fits natively, not once enveloped
	} {
		batch := kafkaBatch(t, []trec{rec})
		var r kbatch.Record
		it := batch.Iter()
		it.Next(&r)
		var e Encoder
		if _, err := e.Append(&r, Window{}); err != ErrTooLarge {
			t.Fatalf("got %v, want ErrTooLarge", err)
		}
	}
}
