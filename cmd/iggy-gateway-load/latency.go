package main

import (
	"math"
	"slices"
	"sync"
	"time"
)

// latencies collects durations; every sample is kept, so percentiles are exact. A run records
// at most one sample per record, a few MB.
type latencies struct {
	mu      sync.Mutex
	samples []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.samples = append(l.samples, d)
	l.mu.Unlock()
}

// percentiles of a set of samples; the zero value means "none recorded".
type percentiles struct {
	N              int
	P50, P99, P999 time.Duration
}

// summary returns the nearest-rank percentiles of l.
func (l *latencies) summary() percentiles { return merged(l) }

// merged returns the nearest-rank percentiles of the samples of every ls together.
func merged(ls ...*latencies) percentiles {
	var s []time.Duration
	for _, l := range ls {
		l.mu.Lock()
		s = append(s, l.samples...)
		l.mu.Unlock()
	}
	if len(s) == 0 {
		return percentiles{}
	}
	slices.Sort(s)
	return percentiles{N: len(s), P50: rank(s, 0.50), P99: rank(s, 0.99), P999: rank(s, 0.999)}
}

// rank is the nearest-rank percentile q of sorted s.
func rank(s []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}
