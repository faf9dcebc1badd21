package offsets

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
)

// Ownership of log partitions (docs/COORDINATOR-LOG.md §7). With several gateways each log
// partition has one owner at a time, its only writer and the coordinator of the groups that
// hash to it. Load makes this store the owner of every partition (a single gateway); Open
// makes it the owner of none, and Acquire and Release follow the ownership that the gateways
// agree on through Iggy.

// Partition states.
const (
	stateNotOwned int32 = iota // another gateway coordinates this partition's groups
	stateLoading               // owned; the view is being rebuilt from the log
	stateServing               // owned and loaded
)

// Open creates the coordinator log if needed and starts the store owning no log partition:
// every group answers NOT_COORDINATOR until Acquire makes its partition this store's.
func (s *Store) Open(ctx context.Context) error {
	if s.loaded.Load() {
		return errors.New("offsets: Open after Load or Open")
	}
	if err := s.log.Ensure(ctx); err != nil {
		return fmt.Errorf("offsets: coordinator log: %w", err)
	}
	for _, p := range s.parts {
		go s.run(p)
	}
	s.loaded.Store(true)
	return nil
}

// Acquire makes this store the owner of log partition k: it rebuilds k's view from the log
// (latest checkpoint plus the records after it, as at startup) and then serves its groups;
// meanwhile they answer COORDINATOR_LOAD_IN_PROGRESS. The caller makes sure the previous
// owner has stopped writing (docs/DEPLOYMENT.md, takeover). On failure k stays loading and
// Acquire may be called again.
func (s *Store) Acquire(ctx context.Context, k int) error {
	if err := s.ready(); err != nil {
		return err
	}
	if k < 0 || k >= len(s.parts) {
		return fmt.Errorf("offsets: no coordinator log partition %d", k)
	}
	p := s.parts[k]
	p.state.Store(stateLoading)
	done := make(chan error, 1)
	// The writer goroutine owns the partition's log position, so the reload runs there,
	// after every write queued before it.
	select {
	case p.w.control <- func() {
		var err error
		defer func() { done <- err }() // a panic of the reload is Acquire's error
		defer supervise.Recover(s.cfg.Logger, "offsets_writer", &err)
		err = s.reload(ctx, p)
	}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := <-done; err != nil {
		return err
	}
	p.state.CompareAndSwap(stateLoading, stateServing) // unless released meanwhile
	return nil
}

// Release gives up log partition k: its groups answer NOT_COORDINATOR from now on, and
// generation events for them are dropped. Writes already queued are dropped too, answered
// NOT_COORDINATOR (their clients retry at the new owner); an append already on its way to
// Iggy may still land, and counts only if it lands before the new owner's fence (fence.go).
func (s *Store) Release(k int) {
	if k >= 0 && k < len(s.parts) {
		p := s.parts[k]
		p.state.Store(stateNotOwned)
		p.term.Add(1)
		p.w.dropGenerations()
	}
}

// Owns reports whether this store owns log partition k and has loaded it.
func (s *Store) Owns(k int) bool {
	return k >= 0 && k < len(s.parts) && s.parts[k].state.Load() == stateServing
}

// Serving returns nil when this store coordinates group now, else the Kafka error a group
// request gets: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or COORDINATOR_NOT_AVAILABLE.
func (s *Store) Serving(group string) error {
	if err := s.ready(); err != nil {
		return err
	}
	return s.partitionOf(group).serving()
}

func (p *partition) serving() error {
	switch p.state.Load() {
	case stateNotOwned:
		return kerr.NotCoordinator
	case stateLoading:
		return kerr.CoordinatorLoadInProgress
	}
	return nil
}

// reload rebuilds p's view from the log and fences it with a new owner epoch, on p's writer
// goroutine.
func (s *Store) reload(ctx context.Context, p *partition) error {
	recovered, ep, end, err := s.loadPartition(ctx, p)
	if err != nil {
		return err
	}
	if err := s.claim(ctx, p, ep, end); err != nil {
		return err
	}
	if recovered || p.sinceCheckpoint >= s.cfg.CheckpointEvery {
		_ = s.writeCheckpoint(ctx, p) // logged on failure
	}
	s.cfg.Logger.Info("coordinator log partition taken over", "partition", p.id,
		"checkpoint", int64(p.checkpoint), "replayed", p.sinceCheckpoint)
	return nil
}

// Claim marks log partition k as owned but not loaded yet: its groups answer
// COORDINATOR_LOAD_IN_PROGRESS until Acquire has loaded it (or NOT_COORDINATOR after Release).
func (s *Store) Claim(k int) {
	if k >= 0 && k < len(s.parts) {
		s.parts[k].state.CompareAndSwap(stateNotOwned, stateLoading)
	}
}
