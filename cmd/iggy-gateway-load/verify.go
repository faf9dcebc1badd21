package main

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
)

// verifier checks consumed records against the layout: each value intact, each sequence
// number seen exactly once, in its partition, and in order within its producer's lane. It is
// safe for concurrent use by the consumers of different partitions.
type verifier struct {
	l    layout
	size int

	mu       sync.Mutex
	seen     []bool
	last     []int64 // last sequence number per lane (partition*producers + producer), -1: none
	problems verifyReport
}

// maxSamples bounds the problem descriptions kept for the report.
const maxSamples = 5

// verifyReport is what a consume leg found.
type verifyReport struct {
	Consumed   int // records read, good or bad
	Valid      int // distinct records that verified
	Missing    int // sequence numbers never seen
	Duplicates int
	Corrupt    int // wrong size, bad checksum or sequence number out of range
	Misplaced  int // in another partition than the one they were produced to
	OutOfOrder int // before a later record of the same producer and partition
	Samples    []string
}

func newVerifier(l layout, size int) *verifier {
	v := &verifier{l: l, size: size, seen: make([]bool, l.records), last: make([]int64, l.partitions*l.producers)}
	for i := range v.last {
		v.last[i] = -1
	}
	return v
}

// check verifies one consumed record.
func (v *verifier) check(partition int, offset int64, value []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r := &v.problems
	r.Consumed++
	var seq uint64
	switch {
	case len(value) != v.size:
		r.Corrupt++
		v.sample("partition %d offset %d: value of %d bytes, want %d", partition, offset, len(value), v.size)
		return
	case binary.BigEndian.Uint32(value[8:]) != valueChecksum(value):
		r.Corrupt++
		v.sample("partition %d offset %d: checksum mismatch", partition, offset)
		return
	default:
		if seq = binary.BigEndian.Uint64(value); seq >= uint64(v.l.records) {
			r.Corrupt++
			v.sample("partition %d offset %d: sequence number %d out of range", partition, offset, seq)
			return
		}
	}
	if v.seen[seq] {
		r.Duplicates++
		v.sample("partition %d offset %d: record %d seen before", partition, offset, seq)
		return
	}
	v.seen[seq] = true
	r.Valid++
	if want := v.l.partition(seq); want != partition {
		r.Misplaced++
		v.sample("partition %d offset %d: record %d belongs to partition %d", partition, offset, seq, want)
		return
	}
	lane := partition*v.l.producers + v.l.producer(seq)
	if int64(seq) < v.last[lane] {
		r.OutOfOrder++
		v.sample("partition %d offset %d: record %d after record %d of the same producer", partition, offset, seq, v.last[lane])
	}
	v.last[lane] = max(v.last[lane], int64(seq))
}

func (v *verifier) sample(format string, args ...any) {
	if len(v.problems.Samples) < maxSamples {
		v.problems.Samples = append(v.problems.Samples, fmt.Sprintf(format, args...))
	}
}

// report returns the findings so far; records not seen yet count as missing.
func (v *verifier) report() verifyReport {
	v.mu.Lock()
	defer v.mu.Unlock()
	r := v.problems
	r.Samples = append([]string(nil), r.Samples...)
	r.Missing = v.l.records - r.Valid
	if r.Missing > 0 && len(r.Samples) < maxSamples {
		for seq, ok := range v.seen {
			if !ok {
				r.Samples = append(r.Samples, fmt.Sprintf("record %d (partition %d) missing", seq, v.l.partition(uint64(seq))))
				break
			}
		}
	}
	return r
}

// ok reports whether every record verified once and nothing else was read.
func (r verifyReport) ok() bool {
	return r.Missing == 0 && r.Duplicates == 0 && r.Corrupt == 0 && r.Misplaced == 0 && r.OutOfOrder == 0
}

// err describes the problems, nil when there are none.
func (r verifyReport) err() error {
	if r.ok() {
		return nil
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{r.Missing, "missing"}, {r.Duplicates, "duplicated"}, {r.Corrupt, "corrupt"}, {r.Misplaced, "in the wrong partition"}, {r.OutOfOrder, "out of order"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return fmt.Errorf("verification failed: %s (read %d records); e.g. %s",
		strings.Join(parts, ", "), r.Consumed, strings.Join(r.Samples, "; "))
}
