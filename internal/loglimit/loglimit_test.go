package loglimit

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLimiterBurstRateAndSuppressedCounts(t *testing.T) {
	var mu sync.Mutex
	counted := map[string]int{}
	l := New(2, 3, func(kind string) { mu.Lock(); counted[kind]++; mu.Unlock() })
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }

	for i := range 3 {
		if ok, _ := l.Allow("open"); !ok {
			t.Fatalf("event %d of the burst refused", i)
		}
	}
	for range 5 {
		if ok, _ := l.Allow("open"); ok {
			t.Fatal("an event beyond the burst was allowed")
		}
	}
	if ok, _ := l.Allow("close"); !ok {
		t.Fatal("another kind shares the bucket of the first")
	}
	now = now.Add(500 * time.Millisecond) // one token at 2 per second
	ok, suppressed := l.Allow("open")
	if !ok || suppressed != 5 {
		t.Fatalf("after refilling: allowed %v, suppressed %d; want true, 5", ok, suppressed)
	}
	if ok, _ := l.Allow("open"); ok {
		t.Fatal("the refill gave more than one token")
	}
	now = now.Add(time.Hour) // the bucket holds at most the burst
	for range 3 {
		l.Allow("open")
	}
	if ok, _ := l.Allow("open"); ok {
		t.Fatal("an idle hour stored more than the burst")
	}
	if counted["open"] != 7 || counted["close"] != 0 {
		t.Fatalf("suppressed counts: %v, want open 7", counted)
	}
}

func TestNilLimiterAllowsEverything(t *testing.T) {
	var l *Limiter
	if ok, n := l.Allow("x"); !ok || n != 0 {
		t.Fatal("a nil limiter refused")
	}
}

func BenchmarkAllow(b *testing.B) {
	l := New(1e9, 1e9, nil)
	for b.Loop() {
		l.Allow("connection_opened")
	}
}

// Log writes the allowed lines with their kind and the count suppressed before them, and
// nothing for suppressed ones.
func TestLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	now := time.Unix(0, 0)
	l := New(1, 1, nil)
	l.now = func() time.Time { return now }
	l.Log(log, slog.LevelInfo, "k", "first")
	l.Log(log, slog.LevelInfo, "k", "dropped")
	now = now.Add(time.Second)
	l.Log(log, slog.LevelInfo, "k", "second")
	l.Log(log, slog.LevelDebug, "k", "below the level")
	out := buf.String()
	if strings.Contains(out, "dropped") || strings.Contains(out, "below the level") ||
		!strings.Contains(out, "msg=first event=k") || !strings.Contains(out, "msg=second suppressed_before=1 event=k") {
		t.Fatalf("log:\n%s", out)
	}
}
