package keylock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// One key held does not stop another key; the same key waits until freed, or until its
// context ends; keys no one holds or waits for are forgotten.
func TestLocksPerKey(t *testing.T) {
	var l Locks[string]
	ctx := context.Background()
	unlockA, err := l.Lock(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	unlockB, err := l.Lock(ctx, "b") // does not wait for "a"
	if err != nil {
		t.Fatal(err)
	}
	unlockB()

	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := l.Lock(short, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock of a held key: %v, want the context's deadline", err)
	}

	got := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		unlock, err := l.Lock(ctx, "a")
		if err != nil {
			t.Error(err)
			return
		}
		close(got)
		unlock()
	})
	select {
	case <-got:
		t.Fatal("a held key was locked again")
	case <-time.After(20 * time.Millisecond):
	}
	unlockA()
	wg.Wait()
	if n := l.Len(); n != 0 {
		t.Errorf("%d keys kept after every lock was freed", n)
	}
}
