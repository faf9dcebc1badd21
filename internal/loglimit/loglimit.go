// Package loglimit rate-limits log lines per event kind with a token bucket, so that a flood
// of connections or refused requests cannot flood the log, and counts what it suppresses.
package loglimit

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Limiter allows Burst events of each kind at once and Rate per second after that. The kinds
// are the gateway's fixed event names, never values from clients, so its state is bounded.
// A nil *Limiter allows everything. It is safe for concurrent use.
type Limiter struct {
	rate  float64
	burst float64
	now   func() time.Time
	// onSuppress learns of every suppressed event (for a metric); nil when nobody counts.
	onSuppress func(kind string)

	mu    sync.Mutex
	kinds map[string]*bucket
}

type bucket struct {
	tokens     float64
	last       time.Time
	suppressed uint64 // since the last allowed event
}

// New returns a limiter allowing burst events of a kind at once and rate per second after
// that. onSuppress, when not nil, is called for each suppressed event.
func New(rate float64, burst int, onSuppress func(kind string)) *Limiter {
	return &Limiter{rate: rate, burst: float64(max(burst, 1)), now: time.Now, onSuppress: onSuppress,
		kinds: make(map[string]*bucket)}
}

// Allow reports whether an event of kind may be logged now. When it may, suppressed is how
// many events of the kind were dropped since the last allowed one, for the line to say so.
func (l *Limiter) Allow(kind string) (ok bool, suppressed uint64) {
	if l == nil {
		return true, 0
	}
	l.mu.Lock()
	now := l.now()
	b := l.kinds[kind]
	if b == nil {
		b = &bucket{tokens: l.burst, last: now}
		l.kinds[kind] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens < 1 {
		b.suppressed++
		l.mu.Unlock()
		if l.onSuppress != nil {
			l.onSuppress(kind)
		}
		return false, 0
	}
	b.tokens--
	suppressed, b.suppressed = b.suppressed, 0
	l.mu.Unlock()
	return true, suppressed
}

// Log logs msg on log at level unless events of kind are suppressed now; an allowed line
// says how many of its kind were suppressed before it ("suppressed_before") and names its
// kind ("event"). A nil *Limiter logs everything.
func (l *Limiter) Log(log *slog.Logger, level slog.Level, kind, msg string, args ...any) {
	if !log.Enabled(context.Background(), level) {
		return
	}
	ok, suppressed := l.Allow(kind)
	if !ok {
		return
	}
	if suppressed > 0 {
		args = append(args, "suppressed_before", suppressed)
	}
	log.Log(context.Background(), level, msg, append(args, "event", kind)...)
}
