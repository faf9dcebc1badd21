package listener

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
)

// TestBudgetFIFOAndRelease runs in a synctest bubble: once synctest.Wait returns, both
// acquires are parked for good, so "not granted" is asserted without waiting for a timeout.
func TestBudgetFIFOAndRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(100)
		stop := make(chan struct{})
		defer close(stop) // after a failure, lets the parked acquires end
		if !b.acquire(60, stop, nil) {
			t.Fatal("first acquire failed")
		}
		got := make(chan int64, 3)
		go func() { b.acquire(50, stop, nil); got <- 50 }()
		synctest.Wait()
		go func() { b.acquire(10, stop, nil); got <- 10 }() // fits, but must queue behind 50
		synctest.Wait()
		b.mu.Lock()
		waiting := len(b.waiters)
		b.mu.Unlock()
		if len(got) != 0 || waiting != 2 {
			t.Fatalf("granted out of order: %d granted, %d waiting", len(got), waiting)
		}
		b.release(60)
		if a, c := <-got, <-got; a+c != 60 {
			t.Fatalf("granted %d and %d", a, c)
		}
		b.release(50)
		b.release(10)
		if b.avail != 100 {
			t.Fatalf("avail %d", b.avail)
		}
	})
}

func TestBudgetClampsAndStops(t *testing.T) {
	b := NewBudget(100)
	if !b.acquire(1000, nil, nil) { // larger than the budget: takes all of it
		t.Fatal("oversized acquire failed")
	}
	stop := make(chan struct{})
	done := make(chan bool)
	go func() { done <- b.acquire(1, stop, nil) }()
	waitWaiters(t, b, 1)
	close(stop)
	if <-done {
		t.Fatal("acquire succeeded after stop")
	}
	b.release(b.clamp(1000)) // what acquire took
	if b.avail != 100 || len(b.waiters) != 0 {
		t.Fatalf("avail %d waiters %d", b.avail, len(b.waiters))
	}
}

func waitWaiters(t *testing.T, b *Budget, n int) {
	t.Helper()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.waiters) == n })
}

// Per-address shares do not add up beyond the process budget (issue 25 asked): every byte an
// address holds is taken from its share and from the budget alike, so many addresses that
// each try to fill their share together hold at most the budget, and the rest wait.
func TestAddressSharesWithinBudget(t *testing.T) {
	const budget, share, addrs = 4 << 20, 1 << 20, 10
	b := NewBudget(budget)
	b.SetAddressShare(share)
	stop := make(chan struct{})
	defer close(stop)
	var granted sync.WaitGroup
	held := make(chan *reservation, addrs)
	for i := range addrs {
		acct := b.openAccount(fmt.Sprintf("10.0.0.%d", i))
		granted.Go(func() {
			r := &reservation{acct: acct}
			if r.growTo(share, stop, nil) {
				held <- r
			}
		})
	}
	waitFor(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.avail == 0 && len(b.waiters) == addrs-budget/share
	})
	if got := len(held); got != budget/share {
		t.Fatalf("%d addresses hold their whole share at once, budget allows %d", got, budget/share)
	}
	for range addrs - budget/share { // each release admits one waiting address
		(<-held).close()
	}
	granted.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.avail < 0 {
		t.Fatalf("budget overdrawn by %d", -b.avail)
	}
}
