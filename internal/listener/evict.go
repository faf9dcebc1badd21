package listener

import (
	"log/slog"
	"time"
)

// evictedReason is why an evicted connection closed, in its "connection closed" line.
const evictedReason = "evicted: idle longest when MAX_CONNECTIONS was reached"

// idleFor is how long c has had no request in flight and no frame being read, or 0 when it
// is busy: a request is being read, served or answered.
func (c *conn) idleFor(now time.Time) time.Duration {
	since := c.idleSince.Load()
	if since == 0 || len(c.sem) > 1 { // the reader's own token is the only one when idle
		return 0
	}
	since = max(since, c.lastAnswer.Load())
	return max(now.Sub(time.Unix(0, since)), time.Nanosecond)
}

// evictIdle closes the connection that has been idle longest, to admit a new one when
// MaxConnections is reached (docs/LIMITS.md), as Kafka's broker closes its least recently
// used connection: idle clients reconnect when they next need to, while new clients would
// otherwise be locked out until IDLE_TIMEOUT. It reports false when every connection is busy.
// The evicted connection's slot is freed when it has closed, so the count may exceed
// MaxConnections by the connections being evicted.
func (s *Server) evictIdle() bool {
	now := time.Now()
	s.mu.Lock()
	var victim *conn
	var longest time.Duration
	for c := range s.conns {
		if c.evicted.Load() {
			continue
		}
		if d := c.idleFor(now); d > longest {
			victim, longest = c, d
		}
	}
	if victim == nil || !victim.evicted.CompareAndSwap(false, true) {
		s.mu.Unlock()
		return false
	}
	s.mu.Unlock()
	s.cfg.LogLimiter.Log(victim.log, slog.LevelInfo, eventConnEvicted, "evicting idle connection: too many connections",
		"idle", longest.Round(time.Millisecond), "max", s.cfg.MaxConnections)
	victim.abort()
	return true
}
