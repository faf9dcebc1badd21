package listener

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// An answer built piece by piece and reserved with ReserveAnswer is held in the budget until
// written; the piece that would take the request past its limit is refused and nothing of it
// is taken.
func TestReserveAnswer(t *testing.T) {
	budget := NewBudget(1 << 20)
	type result struct {
		fitted int
		err    error
		held   int64
	}
	got := make(chan result, 1)
	proceed := make(chan struct{})
	s := startServer(t, describeClusterRoute(func(ctx context.Context) error {
		piece := make([]byte, 100<<10)
		var r result
		for ; r.fitted < 100; r.fitted++ {
			if r.err = ReserveAnswer(ctx, piece); r.err != nil {
				break
			}
		}
		budget.mu.Lock()
		r.held = budget.max - budget.avail
		budget.mu.Unlock()
		got <- r
		<-proceed
		return nil
	}), func(c *Config) { c.Budget = budget })
	c := dial(t, s.addr)
	c.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	r := <-got
	if !errors.Is(r.err, ErrAnswerTooLarge) || r.fitted < 8 || r.fitted > 10 {
		t.Errorf("%d pieces of 100 KiB fitted in 1 MiB, then %v", r.fitted, r.err)
	}
	if r.held < int64(r.fitted)*100<<10 || r.held > 1<<20 {
		t.Errorf("holds %d bytes for %d pieces of 100 KiB", r.held, r.fitted)
	}
	close(proceed)
	c.readResponse(kmsg.NewPtrDescribeClusterResponse())
	waitFor(t, func() bool { budget.mu.Lock(); defer budget.mu.Unlock(); return budget.avail == budget.max })
}

// A piece that fits the limit but not what others hold waits at most the read timeout, then
// fails with ErrMemoryUnavailable.
func TestReserveAnswerWaitsAtMostReadTimeout(t *testing.T) {
	budget := NewBudget(1 << 20)
	errs := make(chan error, 1)
	s := startServer(t, describeClusterRoute(func(ctx context.Context) error {
		budget.mu.Lock()
		others := budget.avail // someone else takes everything left
		budget.mu.Unlock()
		budget.charge(others)
		defer budget.release(others)
		errs <- ReserveAnswer(ctx, make([]byte, 1000))
		return nil
	}), func(c *Config) { c.Budget, c.ReadTimeout = budget, 100*time.Millisecond })
	c := dial(t, s.addr)
	c.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	if err := <-errs; !errors.Is(err, ErrMemoryUnavailable) {
		t.Fatal(err)
	}
	c.readResponse(kmsg.NewPtrDescribeClusterResponse())
}

// Outside a listener request ReserveAnswer takes nothing and succeeds.
func TestReserveAnswerOutsideRequest(t *testing.T) {
	if err := ReserveAnswer(context.Background(), make([]byte, 1<<30)); err != nil {
		t.Fatal(err)
	}
}
