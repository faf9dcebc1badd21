package main

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

func TestFillValueIsDeterministicAndChecked(t *testing.T) {
	for _, size := range []int{valueHeaderSize, 13, 20, 1024} {
		a, b := make([]byte, size), make([]byte, size)
		fillValue(a, 42)
		fillValue(b, 42)
		if !bytes.Equal(a, b) {
			t.Fatalf("size %d: two values of record 42 differ", size)
		}
		fillValue(b, 43)
		if size > valueHeaderSize && bytes.Equal(a[valueHeaderSize:], b[valueHeaderSize:]) {
			t.Errorf("size %d: records 42 and 43 have the same filler", size)
		}
		v := newVerifier(layout{records: 100, producers: 1, partitions: 1}, size)
		v.check(0, 0, a)
		if r := v.report(); r.Valid != 1 || r.Corrupt != 0 {
			t.Errorf("size %d: fresh value does not verify: %+v", size, r)
		}
	}
}

func TestFillerIsWords(t *testing.T) {
	for _, size := range []int{valueHeaderSize + 5, valueHeaderSize + 64, 4096} {
		v := make([]byte, size)
		fillValue(v, 7)
		rest := v[valueHeaderSize:]
		for i := 0; i < len(rest); i += 8 {
			var w [8]byte
			n := copy(w[:], rest[i:])
			if !slices.ContainsFunc(vocabulary[:], func(word uint64) bool {
				var full [8]byte
				binary.LittleEndian.PutUint64(full[:], word)
				return bytes.Equal(full[:n], w[:n])
			}) {
				t.Fatalf("size %d: filler bytes %d..%d %q are not a vocabulary word", size, i, i+n, w[:n])
			}
		}
	}
}

func BenchmarkFillValue(b *testing.B) {
	v := make([]byte, 1024)
	b.SetBytes(int64(len(v)))
	for i := 0; b.Loop(); i++ {
		fillValue(v, uint64(i))
	}
}

// TestLanesCoverEveryRecordOnce checks that the direct writers' lanes hold every record
// exactly once, in order, each on the partition and producer the layout gives it.
func TestLanesCoverEveryRecordOnce(t *testing.T) {
	for _, l := range []layout{
		{records: 1, producers: 1, partitions: 1},
		{records: 10, producers: 3, partitions: 4},
		{records: 1000, producers: 2, partitions: 4},
		{records: 7, producers: 4, partitions: 5},
	} {
		var all []uint64
		for j := range l.producers {
			n := len(all)
			for p := range l.partitions {
				lane := l.lane(j, p)
				if !slices.IsSorted(lane) {
					t.Errorf("%+v lane %d/%d not in order: %v", l, j, p, lane)
				}
				for _, seq := range lane {
					if l.producer(seq) != j || l.partition(seq) != p {
						t.Errorf("%+v: record %d in lane %d/%d, layout says %d/%d", l, seq, j, p, l.producer(seq), l.partition(seq))
					}
				}
				all = append(all, lane...)
			}
			if got := len(all) - n; got != l.produced(j) {
				t.Errorf("%+v: producer %d has %d records in its lanes, produced(%d) = %d", l, j, got, j, l.produced(j))
			}
		}
		slices.Sort(all)
		if len(all) != l.records || (len(all) > 0 && (all[0] != 0 || all[len(all)-1] != uint64(l.records-1))) || len(slices.Compact(all)) != l.records {
			t.Errorf("%+v: lanes hold %d records, want each of 0..%d once", l, len(all), l.records-1)
		}
	}
}

func TestBatchPlan(t *testing.T) {
	for _, tc := range []struct {
		recorded        []int
		total, fallback int
		want            []int
	}{
		{nil, 10, 4, []int{4, 4, 2}},
		{[]int{3, 5}, 8, 4, []int{3, 5}},
		{[]int{3, 5}, 6, 4, []int{3, 3}},
		{[]int{3}, 10, 4, []int{3, 4, 3}},
		{[]int{3}, 0, 4, nil},
	} {
		if got := batchPlan(tc.recorded, tc.total, tc.fallback); !slices.Equal(got, tc.want) {
			t.Errorf("batchPlan(%v, %d, %d) = %v, want %v", tc.recorded, tc.total, tc.fallback, got, tc.want)
		}
	}
}
