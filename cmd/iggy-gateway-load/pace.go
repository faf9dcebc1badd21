package main

import (
	"math"
	"time"
)

// pacer schedules records at a fixed rate: record seq is due at start + seq/rate. Latencies
// of the rate-limited legs are measured from a record's due time, not from when the producer
// got round to it, so a producer that falls behind shows as latency instead of hiding it
// (coordinated omission).
type pacer struct {
	start   time.Time
	rate    float64 // records per second, > 0
	records int     // records in the leg
}

// due returns when record seq is due.
func (p pacer) due(seq int) time.Time {
	return p.start.Add(time.Duration(float64(seq) * float64(time.Second) / p.rate))
}

// dueBy returns how many records are due at now (records 0..n-1), at most p.records.
func (p pacer) dueBy(now time.Time) int {
	if now.Before(p.start) {
		return 0
	}
	// An estimate, then corrected against due itself so that both always agree despite
	// rounding: record n-1 is due at now, record n is not.
	n := min(int(math.Floor(now.Sub(p.start).Seconds()*p.rate))+1, p.records)
	for n < p.records && !p.due(n).After(now) {
		n++
	}
	for n > 0 && p.due(n-1).After(now) {
		n--
	}
	return n
}

// wait waits until record seq is due; false when stop closed first.
func (p pacer) wait(seq int, stop <-chan struct{}) bool {
	d := time.Until(p.due(seq))
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

// warmup is how many records at the start of a rate-limited leg are not measured: those of
// its first second, or of its first fifth when it is shorter than five seconds, while clients
// connect and the consumer reaches the end of the partitions.
func (p pacer) warmup() int {
	d := min(time.Second, time.Duration(float64(p.records)/p.rate*float64(time.Second))/5)
	return min(int(d.Seconds()*p.rate), p.records)
}
