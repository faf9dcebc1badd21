package kbatch

import (
	"bytes"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestBuilderRoundTrip(t *testing.T) {
	want := sampleRecords(1_700_000_000_000)
	prefix := []byte("existing response bytes")
	var b Builder
	b.Begin(append([]byte{}, prefix...), 7)
	offsets := []int64{100, 101, 105, 106, 107} // Iggy offsets may have gaps
	size := HeaderSize
	for i, w := range want {
		size += b.RecordSize(offsets[i], w.ts, w.key, w.value, w.headers)
		if err := b.Append(offsets[i], w.ts, w.key, w.value, w.headers); err != nil {
			t.Fatal(err)
		}
		if b.Size() != size {
			t.Fatalf("after record %d: Size %d, RecordSize sum %d", i, b.Size(), size)
		}
	}
	if b.Len() != len(want) {
		t.Fatalf("Len %d", b.Len())
	}
	out := b.Finish()
	if !bytes.HasPrefix(out, prefix) {
		t.Fatal("Finish lost the bytes before the batch")
	}
	raw := out[len(prefix):]

	// Our decoder.
	batches, got, err := decodeAll(t, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, want)
	h := batches[0].Header
	if h.BaseOffset != 100 || h.LastOffsetDelta != 7 || h.PartitionLeaderEpoch != 7 || h.ProducerID != -1 ||
		h.ProducerEpoch != -1 || h.BaseSequence != -1 || h.Attributes != 0 || h.NumRecords != 5 ||
		h.BaseTimestamp != want[0].ts || h.MaxTimestamp != want[4].ts {
		t.Fatalf("header %+v", h)
	}

	// kmsg's decoder, which shares no code with ours.
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(raw); err != nil {
		t.Fatal(err)
	}
	if kb.Length != int32(len(raw)-12) || kb.Magic != 2 {
		t.Fatalf("kmsg batch %+v", kb)
	}
	rest := kb.Records
	for i, w := range want {
		var r kmsg.Record
		if err := r.ReadFrom(rest); err != nil {
			t.Fatal(err)
		}
		rest = rest[varlongLen(int64(r.Length))+int(r.Length):]
		if kb.FirstTimestamp+r.TimestampDelta64 != w.ts || int64(r.OffsetDelta) != offsets[i]-100 ||
			!sameBytes(r.Key, w.key) || !sameBytes(r.Value, w.value) || len(r.Headers) != len(w.headers) {
			t.Fatalf("kmsg record %d: %+v", i, r)
		}
		for j, hw := range w.headers {
			if r.Headers[j].Key != string(hw.Key) || !sameBytes(r.Headers[j].Value, hw.Value) {
				t.Fatalf("kmsg record %d header %d: %+v", i, j, r.Headers[j])
			}
		}
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes left after the records", len(rest))
	}
}

func TestBuilderEmptyBatchDropped(t *testing.T) {
	var b Builder
	b.Begin([]byte("abc"), -1)
	if out := b.Finish(); string(out) != "abc" {
		t.Fatalf("got %q", out)
	}
}

func TestBuilderRefusesBadOffsets(t *testing.T) {
	var b Builder
	b.Begin(nil, -1)
	if err := b.Append(10, 0, nil, []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{10, 9, 10 + math.MaxInt32 + 1} {
		if err := b.Append(off, 0, nil, []byte("v"), nil); err == nil {
			t.Fatalf("offset %d accepted after 10", off)
		}
	}
	if b.Len() != 1 {
		t.Fatalf("a refused record was counted")
	}
	if _, _, err := decodeAll(t, b.Finish(), nil); err != nil {
		t.Fatalf("batch after refusals: %v", err)
	}
}

func TestBuilderNilHeaderKeyIsEmpty(t *testing.T) {
	var b Builder
	b.Begin(nil, -1)
	b.Append(0, 0, nil, nil, []RecordHeader{{Key: nil, Value: []byte("v")}})
	_, got, err := decodeAll(t, b.Finish(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := got[0].headers[0].Key; k == nil || len(k) != 0 {
		t.Fatalf("key %q", k)
	}
}

func TestBuilderAppendDoesNotAllocate(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	key, value := []byte("key"), bytes.Repeat([]byte("v"), 100)
	headers := []RecordHeader{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("b"), Value: nil}}
	var b Builder
	buf := make([]byte, 0, 1<<20)
	allocs := testing.AllocsPerRun(20, func() {
		b.Begin(buf[:0], -1)
		for i := range 1000 {
			if err := b.Append(int64(i), int64(i), key, value, headers); err != nil {
				t.Fatal(err)
			}
		}
		buf = b.Finish()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per 1000-record batch, want 0", allocs)
	}
}
