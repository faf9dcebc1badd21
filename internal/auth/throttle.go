package auth

import (
	"context"
	"sync"
	"time"
)

// throttle slows down guessing: attempts from one address run one at a time, and after each
// failed one the next attempt from that address waits, the wait doubling from base up to
// limit with every further failure. A success forgets the address.
type throttle struct {
	base, limit time.Duration

	mu    sync.Mutex
	hosts map[string]*hostState
}

type hostState struct {
	turn  chan struct{} // holds a token while an attempt of this host runs
	refs  int           // attempts holding or waiting for the turn
	delay time.Duration // wait after the last failure; 0 after a success
	next  time.Time     // no attempt starts before this
}

// maxIdleHosts bounds the addresses remembered; beyond it, those whose wait has long passed
// are forgotten.
const maxIdleHosts = 10000

func newThrottle(base, limit time.Duration) *throttle {
	return &throttle{base: base, limit: limit, hosts: make(map[string]*hostState)}
}

// acquire waits for host's turn and its delay. It returns the release function to call with
// the outcome, or ctx's error.
func (t *throttle) acquire(ctx context.Context, host string) (release func(ok bool), err error) {
	t.mu.Lock()
	h := t.hosts[host]
	if h == nil {
		t.sweepLocked()
		h = &hostState{turn: make(chan struct{}, 1)}
		t.hosts[host] = h
	}
	h.refs++
	t.mu.Unlock()
	release = func(ok bool) { t.release(host, h, ok) }

	select {
	case h.turn <- struct{}{}:
	case <-ctx.Done():
		t.drop(host, h)
		return nil, ctx.Err()
	}
	t.mu.Lock()
	wait := time.Until(h.next)
	t.mu.Unlock()
	if wait > 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			<-h.turn
			t.drop(host, h)
			return nil, ctx.Err()
		}
	}
	return release, nil
}

func (t *throttle) release(host string, h *hostState, ok bool) {
	t.mu.Lock()
	if ok {
		h.delay, h.next = 0, time.Time{}
	} else {
		h.delay = min(max(2*h.delay, t.base), t.limit)
		h.next = time.Now().Add(h.delay)
	}
	t.mu.Unlock()
	<-h.turn
	t.drop(host, h)
}

// drop gives up one reference; an address without attempts and without a pending wait is
// forgotten at once.
func (t *throttle) drop(host string, h *hostState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h.refs--
	if h.refs == 0 && h.delay == 0 {
		delete(t.hosts, host)
	}
}

// sweepLocked forgets idle addresses whose wait has passed by more than limit, when there are
// too many.
func (t *throttle) sweepLocked() {
	if len(t.hosts) < maxIdleHosts {
		return
	}
	cutoff := time.Now().Add(-t.limit)
	for host, h := range t.hosts {
		if h.refs == 0 && h.next.Before(cutoff) {
			delete(t.hosts, host)
		}
	}
}
