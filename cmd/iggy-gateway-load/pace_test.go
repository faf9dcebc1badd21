package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPacerSchedule(t *testing.T) {
	start := time.Unix(1000, 0)
	p := pacer{start: start, rate: 1000, records: 5000} // one record per millisecond
	for _, tc := range []struct {
		seq  int
		want time.Duration
	}{{0, 0}, {1, time.Millisecond}, {999, 999 * time.Millisecond}, {4999, 4999 * time.Millisecond}} {
		if got := p.due(tc.seq).Sub(start); got != tc.want {
			t.Errorf("due(%d) = start+%s, want start+%s", tc.seq, got, tc.want)
		}
	}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{
		{-time.Second, 0},                 // before the start nothing is due
		{0, 1},                            // record 0 at the start
		{999 * time.Microsecond, 1},       // record 1 not yet
		{time.Millisecond, 2},             // record 1 exactly on time
		{2500 * time.Microsecond, 3},      // records 0, 1, 2
		{time.Hour, 5000},                 // never more than the leg has
		{4999 * time.Millisecond, 5000},   // the last record
		{4998*time.Millisecond + 1, 4999}, // one before the last
	} {
		if got := p.dueBy(start.Add(tc.at)); got != tc.want {
			t.Errorf("dueBy(start+%s) = %d, want %d", tc.at, got, tc.want)
		}
	}
	// due and dueBy agree: every record is due by its own due time and not a tick before.
	q := pacer{start: start, rate: 333_333, records: 100_000}
	for seq := range q.records {
		if n := q.dueBy(q.due(seq)); n <= seq {
			t.Fatalf("record %d is not due at its due time (%d due)", seq, n)
		}
		if n := q.dueBy(q.due(seq).Add(-time.Nanosecond)); seq > 0 && n > seq {
			t.Fatalf("record %d is due before its due time (%d due)", seq, n)
		}
	}
}

func TestPacerWarmup(t *testing.T) {
	for _, tc := range []struct {
		rate    float64
		records int
		want    int
	}{
		{10_000, 100_000, 10_000}, // 10 s: the first second
		{10_000, 20_000, 4_000},   // 2 s: the first fifth
		{1000, 1, 0},
	} {
		if got := (pacer{rate: tc.rate, records: tc.records}).warmup(); got != tc.want {
			t.Errorf("warmup of %d records at %.0f/s = %d, want %d", tc.records, tc.rate, got, tc.want)
		}
	}
}

func TestPacerWait(t *testing.T) {
	p := pacer{start: time.Now(), rate: 1, records: 10}
	if !p.wait(0, nil) {
		t.Fatal("record 0 is due at the start: wait must not block")
	}
	stop := make(chan struct{})
	close(stop)
	begin := time.Now()
	if p.wait(9, stop) { // due in 9 s
		t.Fatal("wait returned true after stop closed")
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Fatalf("wait took %s after stop closed", d)
	}
	q := pacer{start: time.Now(), rate: 100, records: 10}
	if !q.wait(2, nil) || time.Now().Before(q.due(2)) {
		t.Fatal("wait returned before the record was due")
	}
}

func TestPacedRate(t *testing.T) {
	leg := func(name string, records int64, err error) *legResult {
		r := newLegResult(name)
		r.Records, r.Elapsed, r.Err = records, time.Second, err
		return r
	}
	round := []*legResult{
		leg(legProduceGateway, 400_000, nil),
		leg(legProduceDirect, 1_200_000, nil),
		leg(legProduceKafka, 90_000, errors.New("failed")), // a failed leg measured nothing
		leg(legConsumeGateway, 10, nil),                    // consume legs are not produce peaks
		leg(legProduceKafka, 300_000, nil),
	}
	b := &bench{o: &Options{}}
	if got, err := b.pacedRate(round); err != nil || got != 150_000 {
		t.Errorf("pacedRate = %v, %v; want half of the lowest produce rate, 150000", got, err)
	}
	b.o.Rate = 1234
	if got, err := b.pacedRate(round); err != nil || got != 1234 {
		t.Errorf("pacedRate with --rate = %v, %v; want 1234", got, err)
	}
	b.o.Rate = 0
	if _, err := b.pacedRate(round[2:4]); err == nil {
		t.Error("pacedRate without a successful produce leg: want an error")
	}
}

func TestLatencyVerdict(t *testing.T) {
	for _, tc := range []struct {
		gateway, kafka time.Duration
		want           string
	}{
		{10 * time.Millisecond, 6 * time.Millisecond, "+4.00ms, meets"},
		{11 * time.Millisecond, 6 * time.Millisecond, "+5.00ms, meets"},
		{11*time.Millisecond + 1, 6 * time.Millisecond, "misses"},
		{2 * time.Millisecond, 6 * time.Millisecond, "-4.00ms, meets"},
	} {
		if got := latencyVerdict(tc.gateway, tc.kafka); !strings.Contains(got, tc.want) {
			t.Errorf("latencyVerdict(%s, %s) = %q, want %q", tc.gateway, tc.kafka, got, tc.want)
		}
	}
}
