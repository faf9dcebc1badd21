package mapping

import (
	"math"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// referenceWindow is the window by its definition: the earliest record timestamp that is
// positive and exact in µs, found by walking the records.
func referenceWindow(recs *kbatch.Records) Window {
	least := int64(math.MaxInt64)
	var r kbatch.Record
	for it := recs.Iter(); it.Next(&r); {
		if _, ok := exactMicros(r.Timestamp); ok {
			least = min(least, r.Timestamp)
		}
	}
	return NewWindow(least)
}

// WindowOf takes the earliest timestamp kbatch found while validating; it must match the
// definition whatever order and range the timestamps come in (the first record is the
// batch's base timestamp, so later records carry negative deltas when they are earlier).
func TestWindowOfMatchesDefinition(t *testing.T) {
	tooLarge := int64(math.MaxUint64/1000) + 1
	for _, tc := range []struct {
		name string
		ts   []int64
	}{
		{"ascending", []int64{ts0, ts0 + 1, ts0 + 2}},
		{"earliest not first", []int64{ts0 + 50, ts0, ts0 + 10}},
		{"no timestamps", []int64{-1, -1}},
		{"zero and none", []int64{0, -1, ts0}},
		{"negative", []int64{-5, ts0 + 3, ts0}},
		{"too large for µs", []int64{tooLarge, tooLarge + 1}},
		{"too large and exact", []int64{tooLarge, ts0 + 9, ts0 + 8}},
		{"wider than one send", []int64{ts0 + 5*3_600_000, ts0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := make([]trec, len(tc.ts))
			for i, ts := range tc.ts {
				recs[i] = trec{ts: ts, value: b("v")}
			}
			batch := kafkaBatch(t, recs)
			if got, want := WindowOf(&batch), referenceWindow(&batch); got != want {
				t.Fatalf("WindowOf = %+v, want %+v", got, want)
			}
		})
	}
}
