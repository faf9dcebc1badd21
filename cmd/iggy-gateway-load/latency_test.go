package main

import (
	"testing"
	"time"
)

func TestPercentilesNearestRank(t *testing.T) {
	var l latencies
	if s := l.summary(); s.N != 0 || s.P50 != 0 {
		t.Fatalf("empty summary %+v", s)
	}
	for i := 1000; i >= 1; i-- { // added out of order
		l.add(time.Duration(i) * time.Millisecond)
	}
	s := l.summary()
	want := percentiles{N: 1000, P50: 500 * time.Millisecond, P99: 990 * time.Millisecond, P999: 999 * time.Millisecond}
	if s != want {
		t.Fatalf("summary %+v, want %+v", s, want)
	}
	var one latencies
	one.add(time.Second)
	if s := one.summary(); s.P50 != time.Second || s.P999 != time.Second {
		t.Fatalf("one sample: %+v", s)
	}
	if s := merged(&l, &one); s.N != 1001 || s.P999 != time.Second || s.P50 != 501*time.Millisecond {
		t.Fatalf("merged: %+v", s)
	}
}
