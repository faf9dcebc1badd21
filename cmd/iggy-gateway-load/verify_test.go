package main

import (
	"strings"
	"testing"
)

func TestVerifierFindsEachKindOfProblem(t *testing.T) {
	l := layout{records: 8, producers: 2, partitions: 2}
	const size = 32
	val := func(seq uint64) []byte {
		v := make([]byte, size)
		fillValue(v, seq)
		return v
	}
	flipped := val(0)
	flipped[20] ^= 1
	badSeq := val(1)
	badSeq[7] = 200 // sequence number out of range, checksum fixed up
	copy(badSeq[8:12], checksumBytes(badSeq))

	// all records where they belong: partition(seq) = seq/2 % 2.
	good := []struct {
		p   int
		seq uint64
	}{{0, 0}, {0, 1}, {0, 4}, {0, 5}, {1, 2}, {1, 3}, {1, 6}, {1, 7}}

	type rec struct {
		p     int
		value []byte
	}
	all := func(skip uint64) []rec {
		var out []rec
		for _, g := range good {
			if g.seq != skip {
				out = append(out, rec{g.p, val(g.seq)})
			}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		recs   []rec
		check  func(verifyReport) bool
		phrase string
	}{
		{"clean", all(99), func(r verifyReport) bool { return r.ok() && r.Valid == 8 && r.Consumed == 8 }, ""},
		{"missing", all(5), func(r verifyReport) bool { return r.Missing == 1 }, "record 5 (partition 0) missing"},
		{"duplicate", append(all(99), rec{0, val(4)}), func(r verifyReport) bool { return r.Duplicates == 1 && r.Valid == 8 }, "seen before"},
		{"bit flip", append(all(99), rec{0, flipped}), func(r verifyReport) bool { return r.Corrupt == 1 }, "checksum mismatch"},
		{"short", append(all(99), rec{1, val(2)[:size-1]}), func(r verifyReport) bool { return r.Corrupt == 1 }, "value of 31 bytes"},
		{"sequence out of range", append(all(99), rec{1, badSeq}), func(r verifyReport) bool { return r.Corrupt == 1 }, "out of range"},
		{"wrong partition", append(all(2), rec{0, val(2)}), func(r verifyReport) bool { return r.Misplaced == 1 }, "belongs to partition 1"},
		{"out of order", []rec{{0, val(4)}, {0, val(0)}, {0, val(1)}, {0, val(5)}, {1, val(2)}, {1, val(3)}, {1, val(6)}, {1, val(7)}},
			func(r verifyReport) bool { return r.OutOfOrder == 1 && r.Valid == 8 }, "record 0 after record 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVerifier(l, size)
			for i, r := range tc.recs {
				v.check(r.p, int64(i), r.value)
			}
			r := v.report()
			if !tc.check(r) {
				t.Fatalf("report %+v", r)
			}
			err := r.err()
			if tc.phrase == "" {
				if err != nil {
					t.Fatalf("clean run reported %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.phrase) {
				t.Fatalf("error %v, want it to mention %q", err, tc.phrase)
			}
		})
	}
}

func checksumBytes(v []byte) []byte {
	c := valueChecksum(v)
	return []byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)}
}
