package auth

import (
	"context"
	"errors"
	"sync"
	"time"
)

// throttle slows down guessing (docs/SECURITY.md, "Password guessing"). Attempts from one
// address run one at a time, and every failed attempt makes later ones wait, the wait doubling
// from base up to limit with every further failure, at two levels:
//
//   - per address: counts the failures of every account tried from it, so spraying one
//     password over many user names is slowed as much as guessing one. A success does not
//     reset it (an attacker holding one valid account could otherwise reset it between
//     guesses); it is forgotten once the address has had no failure for limit after its wait.
//   - per (address, user name): a success of that user resets it, so a user who mistyped is
//     not held back by it; it is remembered for userMemory after its wait, so guessing one
//     account keeps doubling after the address level has been forgotten.
//
// An attempt waits for the later of the two. Its outcome is recorded only when it was checked:
// an attempt abandoned (the connection closed, or the wait would pass the caller's deadline)
// leaves no trace, so closed connections cannot lengthen the wait of the next login.
type throttle struct {
	base, limit time.Duration
	now         func() time.Time
	after       func(time.Duration) <-chan time.Time

	mu    sync.Mutex
	hosts map[string]*hostState
	users map[userKey]*backoff
}

type hostState struct {
	turn    chan struct{} // holds a token while an attempt of this host runs
	refs    int           // attempts holding or waiting for the turn
	backoff               // failures of every user name tried from the host
}

type userKey struct{ host, user string }

// backoff is one level's state: the wait after the last failure and when it ends.
type backoff struct {
	delay time.Duration // 0: no failure remembered
	next  time.Time     // no attempt starts before this
}

func (b *backoff) fail(now time.Time, base, limit time.Duration) {
	b.delay = min(max(2*b.delay, base), limit)
	b.next = now.Add(b.delay)
}

// forgotten reports whether the failures are older than memory past their wait.
func (b *backoff) forgotten(now time.Time, memory time.Duration) bool {
	return b.delay == 0 || now.After(b.next.Add(memory))
}

// outcome is what an attempt's check found.
type outcome int

const (
	abandoned outcome = iota // not checked, or the check could not finish: nothing recorded
	failed
	succeeded
)

// userMemory is how long, in multiples of limit, a (host, user) failure is remembered after
// its wait ended.
const userMemory = 10

// maxIdleHosts bounds the addresses (and address, user pairs) remembered; beyond it, those
// whose failures are forgotten are dropped.
const maxIdleHosts = 10000

// errWaitTooLong: the throttle's wait would end after the caller's deadline.
var errWaitTooLong = errors.New("the wait after earlier failed attempts from this address would exceed the read timeout")

func newThrottle(base, limit time.Duration) *throttle {
	return &throttle{
		base: base, limit: limit, now: time.Now, after: time.After,
		hosts: make(map[string]*hostState), users: make(map[userKey]*backoff),
	}
}

// acquire waits for host's turn and the wait of host and of (host, user). It returns the
// release function to call with the outcome, or an error: ctx's, or errWaitTooLong when the
// wait would end after ctx's deadline (then it does not wait at all).
func (t *throttle) acquire(ctx context.Context, host, user string) (release func(outcome), err error) {
	t.mu.Lock()
	h := t.hosts[host]
	if h == nil {
		t.sweepLocked()
		h = &hostState{turn: make(chan struct{}, 1)}
		t.hosts[host] = h
	}
	h.refs++
	t.mu.Unlock()

	select {
	case h.turn <- struct{}{}:
	case <-ctx.Done():
		t.drop(host, h)
		return nil, ctx.Err()
	}
	give := func() {
		<-h.turn
		t.drop(host, h)
	}
	t.mu.Lock()
	now := t.now()
	if h.forgotten(now, t.limit) {
		h.backoff = backoff{}
	}
	next := h.next
	if u := t.users[userKey{host, user}]; u != nil {
		if u.forgotten(now, userMemory*t.limit) {
			delete(t.users, userKey{host, user})
		} else if u.next.After(next) {
			next = u.next
		}
	}
	t.mu.Unlock()
	if wait := next.Sub(now); wait > 0 {
		if deadline, ok := ctx.Deadline(); ok && wait > time.Until(deadline) {
			give()
			return nil, errWaitTooLong
		}
		select {
		case <-t.after(wait):
		case <-ctx.Done():
			give()
			return nil, ctx.Err()
		}
	}
	return func(o outcome) {
		t.record(host, user, h, o)
		give()
	}, nil
}

func (t *throttle) record(host, user string, h *hostState, o outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := userKey{host, user}
	switch o {
	case failed:
		now := t.now()
		h.fail(now, t.base, t.limit)
		u := t.users[key]
		if u == nil {
			t.sweepLocked()
			u = &backoff{}
			t.users[key] = u
		}
		u.fail(now, t.base, t.limit)
	case succeeded:
		delete(t.users, key)
	}
}

// drop gives up one reference; an address without attempts and without failures to remember
// is forgotten at once.
func (t *throttle) drop(host string, h *hostState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h.refs--
	if h.refs == 0 && h.delay == 0 {
		delete(t.hosts, host)
	}
}

// sweepLocked forgets idle addresses and (address, user) pairs whose failures are forgotten,
// when there are too many.
func (t *throttle) sweepLocked() {
	if len(t.hosts) < maxIdleHosts && len(t.users) < maxIdleHosts {
		return
	}
	now := t.now()
	for host, h := range t.hosts {
		if h.refs == 0 && h.forgotten(now, t.limit) {
			delete(t.hosts, host)
		}
	}
	for key, u := range t.users {
		if u.forgotten(now, userMemory*t.limit) {
			delete(t.users, key)
		}
	}
}
