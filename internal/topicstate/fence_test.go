package topicstate

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

// heldLog holds appends while held, as if the gateway were stopped with a write on its way.
type heldLog struct {
	iggylog.Log
	mu      sync.Mutex
	held    chan struct{}
	entered chan struct{}
}

func (l *heldLog) Append(ctx context.Context, p int, records [][]byte) (uint64, error) {
	l.mu.Lock()
	held := l.held
	l.mu.Unlock()
	if held != nil {
		l.entered <- struct{}{}
		<-held
	}
	return l.Log.Append(ctx, p, records)
}

func controllerStore(t *testing.T, log iggylog.Log, epoch uint64) *Store {
	t.Helper()
	s := New(log, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.SetControllerEpoch(func() uint64 { return epoch })
	if err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSupersededControllerIsIgnored: a controller paused with a config write on its way to
// Iggy is replaced by a controller of a newer epoch, which stores its own configs; the late
// write lands after them, is ignored by every reader (a restart included, and from a
// snapshot), and its writer is told so instead of being acknowledged.
func TestSupersededControllerIsIgnored(t *testing.T) {
	ctx := t.Context()
	mem := iggylog.NewMem(1)
	slow := &heldLog{Log: mem, entered: make(chan struct{}, 1)}
	old := controllerStore(t, slow, 1)
	if err := old.SetConfigs(ctx, "t", 1, map[string]string{"retention.ms": "1"}); err != nil {
		t.Fatal(err)
	}
	slow.mu.Lock()
	slow.held = make(chan struct{})
	slow.mu.Unlock()
	late := make(chan error, 1)
	go func() { late <- old.SetConfigs(ctx, "t", 1, map[string]string{"retention.ms": "2"}) }()
	<-slow.entered

	next := controllerStore(t, mem, 2)
	if err := next.SetConfigs(ctx, "t", 1, map[string]string{"retention.ms": "3"}); err != nil {
		t.Fatal(err)
	}
	slow.mu.Lock()
	close(slow.held)
	slow.held = nil
	slow.mu.Unlock()
	select {
	case err := <-late:
		if !errors.Is(err, ErrSuperseded) {
			t.Fatalf("the superseded controller's write answered %v, want ErrSuperseded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the late write did not return")
	}
	if end, _ := mem.End(ctx, 0); end != 3 {
		t.Fatalf("log end %d, want 3 (the late record landed last)", end)
	}
	for _, s := range []*Store{old, next, controllerStore(t, mem, 0)} {
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if got := s.Cached("t", 1).Configs["retention.ms"]; got != "3" {
			t.Fatalf("retention.ms = %q, want the new controller's 3", got)
		}
	}
	// From a snapshot: the snapshot keeps the epoch, so a record of the old epoch after it
	// is still ignored.
	snap := controllerStore(t, mem, 2)
	snap.snapshotEvery = 1
	if err := snap.SetConfigs(ctx, "u", 2, map[string]string{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	if err := old.SetConfigs(ctx, "t", 1, map[string]string{"retention.ms": "4"}); !errors.Is(err, ErrSuperseded) {
		t.Fatalf("a write of the old epoch after a snapshot: %v, want ErrSuperseded", err)
	}
	if got := controllerStore(t, mem, 0).Cached("t", 1).Configs["retention.ms"]; got != "3" {
		t.Fatalf("after a snapshot: retention.ms = %q, want 3", got)
	}
}
