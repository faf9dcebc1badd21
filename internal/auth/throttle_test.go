package auth

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// fakeClock is the throttle's clock in tests: a wait returns at once, moving the clock on by
// its length and recording it, so the waits are checked exactly.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	waits []time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) after(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.waits = append(c.waits, d)
	ch := make(chan time.Time, 1)
	ch <- c.t
	return ch
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// waited is the total of the waits recorded since mark.
func (c *fakeClock) waited(mark int) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum time.Duration
	for _, w := range c.waits[mark:] {
		sum += w
	}
	return sum
}

func (c *fakeClock) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waits)
}

// attempt is one SASL PLAIN attempt of a throttle scenario.
type attempt struct {
	advance  time.Duration // clock moves on before it
	user     string
	password string // "right" succeeds, "unreachable" cannot be checked, anything else fails
	peer     net.Addr
	wait     time.Duration // the throttle's wait before it is checked
	err      error         // nil, ErrBadCredentials or ErrUnavailable
}

func runThrottle(t *testing.T, name string, opts Options, steps []attempt) {
	t.Helper()
	opts.Verifier = &fakeVerifier{}
	if opts.FailureDelay == 0 {
		opts.FailureDelay, opts.MaxFailureDelay = time.Second, 8*time.Second
	}
	if opts.Timeout == 0 {
		opts.Timeout = time.Hour // the fake clock's waits take no real time
	}
	a := NewAuthenticator(opts)
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	a.throttle.now, a.throttle.after = clk.now, clk.after
	for i, s := range steps {
		clk.advance(s.advance)
		peer := s.peer
		if peer == nil {
			peer = peerA
		}
		m := clk.mark()
		_, err := a.Authenticate(context.Background(), peer, MechanismPlain, []byte("\x00"+s.user+"\x00"+s.password), listener.Identity{})
		if got := clk.waited(m); got != s.wait || !errors.Is(err, s.err) && !(err == nil && s.err == nil) {
			t.Errorf("%s: attempt %d (%s/%s): waited %v, err %v; want %v, %v", name, i+1, s.user, s.password, got, err, s.wait, s.err)
		}
	}
}

// TestThrottle runs guessing scenarios from one address on a fake clock (base 1 s, limit 8 s).
func TestThrottle(t *testing.T) {
	bad, unavailable := ErrBadCredentials, ErrUnavailable
	peerB := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 1}
	runThrottle(t, "doubling up to the limit", Options{}, []attempt{
		{user: "v", password: "x", err: bad},
		{user: "v", password: "x", wait: time.Second, err: bad},
		{user: "v", password: "x", wait: 2 * time.Second, err: bad},
		{user: "v", password: "x", wait: 4 * time.Second, err: bad},
		{user: "v", password: "x", wait: 8 * time.Second, err: bad},
		{user: "v", password: "x", wait: 8 * time.Second, err: bad},
		{user: "v", password: "right", peer: peerB}, // another address is not slowed down
		{user: "v", password: "right", wait: 8 * time.Second},
	})
	// The attack of the penetration test: a valid account's logins between the guesses reset
	// nothing, so the victim's wait keeps doubling.
	runThrottle(t, "a success of another account resets nothing", Options{}, []attempt{
		{user: "victim", password: "x", err: bad},
		{user: "victim", password: "x", wait: time.Second, err: bad},
		{user: "attacker", password: "right", wait: 2 * time.Second},
		{user: "victim", password: "x", err: bad},
		{user: "victim", password: "x", wait: 4 * time.Second, err: bad},
	})
	runThrottle(t, "spraying many names with successes between", Options{}, []attempt{
		{user: "u1", password: "x", err: bad},
		{user: "attacker", password: "right", wait: time.Second},
		{user: "u2", password: "x", err: bad},
		{user: "attacker", password: "right", wait: 2 * time.Second},
		{user: "u3", password: "x", err: bad},
		{user: "attacker", password: "right", wait: 4 * time.Second},
	})
	// The address forgets its failures after a quiet limit (8 s) past its wait; the guessed
	// account's failures are remembered longer and keep doubling.
	runThrottle(t, "a user's failures outlast the address's", Options{}, []attempt{
		{user: "v", password: "x", err: bad},
		{user: "v", password: "x", wait: time.Second, err: bad},
		{user: "v", password: "x", wait: 2 * time.Second, err: bad},
		{advance: 13 * time.Second, user: "other", password: "x", err: bad}, // address forgotten: waits nothing, then 1 s
		{user: "v", password: "x", wait: time.Second, err: bad},             // v: 4 s → 8 s
		{user: "v", password: "right", wait: 8 * time.Second},
		{user: "v", password: "x", err: bad},                            // v's success reset v; the address's 2 s have passed
		{user: "other", password: "x", wait: 4 * time.Second, err: bad}, // the address's third failure since it forgot
	})
	// Attempts that could not be checked (Iggy unreachable, or the client gone: both end the
	// check with an error other than a rejection) neither reset nor lengthen the wait.
	runThrottle(t, "unchecked attempts leave no trace", Options{}, []attempt{
		{user: "v", password: "x", err: bad},
		{user: "v", password: "unreachable", wait: time.Second, err: unavailable},
		{user: "v", password: "x", err: bad},
		{user: "v", password: "x", wait: 2 * time.Second, err: bad},
	})
	// A wait longer than the attempt's timeout (READ_TIMEOUT) is not waited: the attempt is
	// closed unchecked at once, and counts for nothing.
	runThrottle(t, "waits bounded by the timeout", Options{Timeout: 3 * time.Second}, []attempt{
		{user: "v", password: "x", err: bad},
		{user: "v", password: "x", wait: time.Second, err: bad},
		{user: "v", password: "x", wait: 2 * time.Second, err: bad},
		{user: "v", password: "right", err: unavailable}, // 4 s > 3 s
		{advance: 4 * time.Second, user: "v", password: "right"},
	})
}

// An attempt whose caller gives up while it waits (the connection closed) leaves no trace, and
// the address is forgotten once no attempt and no failure remains.
func TestThrottleCancelledWait(t *testing.T) {
	a := NewAuthenticator(Options{Verifier: &fakeVerifier{}, FailureDelay: time.Hour, MaxFailureDelay: time.Hour})
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, peerA, MechanismPlain, []byte("\x00v\x00x"), listener.Identity{}); !errors.Is(err, ErrBadCredentials) {
		t.Fatal(err)
	}
	// The hour's wait exceeds the default timeout (15 s): refused at once, without waiting.
	start := time.Now()
	if _, err := a.Authenticate(ctx, peerA, MechanismPlain, []byte("\x00v\x00right"), listener.Identity{}); !errors.Is(err, ErrUnavailable) || time.Since(start) > time.Second {
		t.Fatalf("err %v after %v; want ErrUnavailable at once", err, time.Since(start))
	}
	// A caller that gives up while waiting for the address's turn.
	release, err := a.throttle.acquire(ctx, "10.9.9.9", "v")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := a.throttle.acquire(cctx, "10.9.9.9", "w")
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	release(succeeded)
	a.throttle.mu.Lock()
	_, remembered := a.throttle.hosts["10.9.9.9"]
	a.throttle.mu.Unlock()
	if remembered {
		t.Error("address remembered without attempts or failures")
	}
}
