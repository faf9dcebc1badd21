// Package groupstest provides test helpers for code built on the groups coordinator.
package groupstest

import (
	"sync"
	"time"
)

// Clock is a manual clock implementing groups.Clock. Timers fire only from Advance, in
// deadline order (ties in creation order), synchronously on the goroutine that calls Advance.
type Clock struct {
	mu     sync.Mutex
	now    time.Duration
	seq    uint64
	timers []*timer
}

type timer struct {
	at      time.Duration
	seq     uint64
	f       func()
	stopped bool
}

// NewClock returns a clock at elapsed time zero.
func NewClock() *Clock { return &Clock{} }

// AfterFunc schedules f to run once the clock has advanced by d.
func (c *Clock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &timer{at: c.now + max(d, 0), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.stopped {
			return false
		}
		t.stopped = true
		c.remove(t)
		return true
	}
}

// Advance moves the clock forward by d, running every timer that falls due, including timers
// that the callbacks themselves schedule within the window.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now + d
	for {
		t := c.next(target)
		if t == nil {
			break
		}
		t.stopped = true
		c.remove(t)
		c.now = t.at
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = target
	c.mu.Unlock()
}

// Elapsed returns how far the clock has advanced since it was created.
func (c *Clock) Elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Pending returns the number of timers that have not fired or been stopped.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

func (c *Clock) next(target time.Duration) *timer {
	var best *timer
	for _, t := range c.timers {
		if t.at > target {
			continue
		}
		if best == nil || t.at < best.at || (t.at == best.at && t.seq < best.seq) {
			best = t
		}
	}
	return best
}

func (c *Clock) remove(t *timer) {
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return
		}
	}
}
