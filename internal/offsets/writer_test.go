package offsets

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

// gateLog counts appends (one Append is one Iggy send of iggylog.Topic below 8 MiB) and can hold
// them: while held, every Append waits for release.
type gateLog struct {
	iggylog.Log
	mu      sync.Mutex
	appends int
	held    chan struct{} // nil: appends pass
	entered chan struct{} // receives once per Append that starts waiting
}

func newGateLog(inner iggylog.Log) *gateLog {
	return &gateLog{Log: inner, entered: make(chan struct{}, 1024)}
}

func (l *gateLog) hold() {
	l.mu.Lock()
	l.held = make(chan struct{})
	l.mu.Unlock()
}

func (l *gateLog) release() {
	l.mu.Lock()
	close(l.held)
	l.held = nil
	l.mu.Unlock()
}

func (l *gateLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.appends
}

func (l *gateLog) Append(ctx context.Context, partition int, records [][]byte) (uint64, error) {
	l.mu.Lock()
	l.appends++
	held := l.held
	l.mu.Unlock()
	if held != nil {
		l.entered <- struct{}{}
		select {
		case <-held:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return l.Log.Append(ctx, partition, records)
}

// waitQueued waits until n writes wait in the queue of group's log partition.
func waitQueued(t *testing.T, s *Store, group string, n int) {
	t.Helper()
	q := s.partitionOf(group).w.queue
	deadline := time.Now().Add(10 * time.Second)
	for len(q) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", len(q), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Commits queued while an append is in flight go out together in the next append, and each
// is acknowledged only once that append succeeded.
func TestGroupCommitCoalescesQueuedCommits(t *testing.T) {
	log := newGateLog(iggylog.NewMem(1))
	s := openStore(t, log)
	loaded := log.count() // the fence Load appended
	log.hold()
	var wg sync.WaitGroup
	errs := make(chan error, 21)
	commitAsync := func(i int) {
		wg.Go(func() {
			errs <- errors.Join(s.Commit(t.Context(), "g", []Commit{commit("t", int32(i), int64(i), -1, "")})...)
		})
	}
	commitAsync(0)
	<-log.entered // the first append is in flight
	for i := 1; i <= 20; i++ {
		commitAsync(i)
	}
	waitQueued(t, s, "g", 20)
	if len(errs) != 0 {
		t.Fatal("a commit was acknowledged before its append")
	}
	log.release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := log.count() - loaded; n != 2 {
		t.Fatalf("21 commits took %d appends, want 2 (one in flight, then the 20 queued meanwhile)", n)
	}
	for i := range 21 {
		if got := fetchOne(t, s, "g", "t", int32(i)); got.Offset != int64(i) {
			t.Fatalf("partition %d: %+v", i, got)
		}
	}
}

// A full queue makes writers wait (until their deadline) instead of growing.
func TestFullQueueAppliesBackpressure(t *testing.T) {
	log := newGateLog(iggylog.NewMem(1))
	s := openStore(t, log, func(c *Config) { c.WriteQueue = 2 })
	log.hold()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i := range 3 {
		wg.Go(func() {
			errs <- errors.Join(s.Commit(t.Context(), "g", []Commit{commit("t", int32(i), 1, -1, "")})...)
		})
		if i == 0 {
			<-log.entered
		}
	}
	waitQueued(t, s, "g", 2)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := s.Commit(ctx, "g", []Commit{commit("t", 9, 1, -1, "")})[0]; ErrorCode(err) != kerr.RequestTimedOut.Code {
		t.Fatalf("commit into a full queue: %v, want REQUEST_TIMED_OUT", err)
	}
	log.release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := fetchOne(t, s, "g", "t", 9); got.Offset != -1 {
		t.Fatalf("the refused commit was stored: %+v", got)
	}
}

// A generation reported late (older than the recorded one) cannot delete or replace it.
func TestOlderGenerationCannotDeleteNewer(t *testing.T) {
	s := openStore(t, iggylog.NewMem(testPartitions))
	ctx := t.Context()
	if err := s.RecordGeneration(ctx, "g", 6, "consumer", 3); err != nil {
		t.Fatal(err)
	}
	// Generation 5, in which the group was empty, arrives after generation 6.
	if err := s.RecordGeneration(ctx, "g", 5, "consumer", 0); err != nil {
		t.Fatal(err)
	}
	if pt, gen, ok := s.LookupGroup("g"); !ok || gen != 6 || pt != "consumer" {
		t.Fatalf("after a late generation 5: %q %d %v, want consumer 6", pt, gen, ok)
	}
}

// Generation events are recorded in the order the coordinator reports them, even while
// appends are slow: the last event decides what is stored.
func TestOnGenerationRecordsInOrder(t *testing.T) {
	mem := iggylog.NewMem(testPartitions)
	log := newGateLog(mem)
	s := openStore(t, log)
	log.hold()
	s.OnGeneration(groups.GenerationEvent{Group: "held", Generation: 1, ProtocolType: "consumer", Members: 1})
	<-log.entered // the writer is busy; the events below wait
	for g := range 20 {
		group := fmt.Sprint("g", g)
		for gen := int32(1); gen <= 5; gen++ {
			members := 1
			if gen%2 == 0 {
				members = 0 // the group became empty: forgotten (it has no offsets)
			}
			s.OnGeneration(groups.GenerationEvent{Group: group, Generation: gen, ProtocolType: "consumer", Members: members})
		}
	}
	log.release()
	if err := s.Close(t.Context()); err != nil { // writes everything pending
		t.Fatal(err)
	}
	again := openStore(t, mem)
	for g := range 20 {
		if pt, gen, ok := again.LookupGroup(fmt.Sprint("g", g)); !ok || gen != 5 || pt != "consumer" {
			t.Fatalf("group g%d after restart: %q %d %v, want consumer 5", g, pt, gen, ok)
		}
	}
}
