package offsets

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Owner epochs (docs/COORDINATOR-LOG.md §7). Iggy has no conditional append, so a gateway
// that lost a log partition (paused by a GC, a stalled network or a slow Iggy) can still
// append after the new owner loaded it. Every record therefore carries its writer's owner
// epoch, a fencing token that only grows: an owner takes a partition over by reading it to
// its end, then appending a fence record with an epoch above every epoch in the partition;
// from that fence on, replay ignores records of lower epochs. The epoch is derived from the
// log itself rather than from the membership's generation: each gateway counts the
// membership changes it saw since it started, so generations of two gateways cannot be
// compared, while the log is one order every gateway reads.

// errFenced means another owner took the log partition over with a higher epoch.
var errFenced = errors.New("coordinator log partition taken over by another owner")

// epochs follows the owner epoch of a log partition along a replay.
type epochs struct{ cur uint64 }

// admit reports whether replay applies r: a fence raising the epoch, or any other record of
// the current epoch or above. A fence that does not raise the epoch is a takeover that lost
// to an earlier fence; a record below the current epoch was written by a superseded owner.
func (e *epochs) admit(r *Record) bool {
	if r.Kind == KindFence {
		if r.Epoch <= e.cur {
			return false
		}
		e.cur = r.Epoch
		return true
	}
	if r.Epoch < e.cur {
		return false
	}
	// Above the current epoch without a fence: written by an owner whose fence is gone
	// (Iggy lost it); its records are the newest there are.
	e.cur = r.Epoch
	return true
}

// claim makes this store p's owner after loadPartition read p up to end with epochs ep: it
// appends a fence with the next epoch, then applies what other writers appended between end
// and the fence (replay applies those too, as they precede it). It fails with errFenced when
// a fence of the same or a higher epoch got there first (another gateway took p over at the
// same moment). Runs on p's writer goroutine, or in Load before it starts.
func (s *Store) claim(ctx context.Context, p *partition, ep epochs, end uint64) error {
	if s.cfg.Unfenced {
		p.epoch.Store(ep.cur)
		p.next = end
		return nil
	}
	epoch := ep.cur + 1
	fence := Record{Kind: KindFence, Checkpoint: p.checkpoint, Time: s.cfg.Now().UnixMilli(), Epoch: epoch, Node: s.cfg.Node}
	at, err := s.log.Append(ctx, p.id, [][]byte{fence.encode(nil)})
	if err != nil {
		return fmt.Errorf("offsets: fencing coordinator log partition %d: %w", p.id, err)
	}
	var gap []*Record
	if at > end {
		err := s.scan(ctx, p.id, end, at, []span{{end, at}}, func(_ uint64, r *Record) error {
			if ep.admit(r) && r.Kind != KindCheckpoint {
				gap = append(gap, r)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if ep.cur >= epoch {
		return fmt.Errorf("offsets: coordinator log partition %d: %w (epoch %d there before this gateway's %d)", p.id, errFenced, ep.cur, epoch)
	}
	p.mu.Lock()
	for _, r := range gap {
		p.groups.apply(r)
	}
	p.mu.Unlock()
	p.epoch.Store(epoch)
	p.next = at + 1
	// The fence is not counted: a start without writes then needs no checkpoint at shutdown
	// (a replay just passes the fences after the latest one).
	p.sinceCheckpoint += len(gap)
	s.cfg.Logger.Debug("coordinator log partition fenced for this gateway", "partition", p.id, "epoch", epoch, "offset", at, "caught_up", len(gap))
	return nil
}

// landed checks where Iggy put an append of n records that the writer expected at p.next.
// Anywhere else means another writer appended in between: if that was a takeover (a record
// of a higher epoch), this append is ignored by every replay, so the store gives p up
// (fenced) and returns an error carrying NOT_COORDINATOR. An error reading the gap leaves
// p.next where it was, so that the next append checks the gap again.
func (s *Store) landed(ctx context.Context, p *partition, first uint64, n int) error {
	mine := p.epoch.Load()
	switch {
	case s.cfg.Unfenced && first > p.next:
		// Another standalone gateway appended too: nothing to give up (Config.Unfenced).
	case first == p.next:
	case first < p.next:
		s.cfg.Logger.Warn("coordinator log append landed below the expected offset (Iggy lost the log's tail?)",
			"partition", p.id, "offset", first, "expected", p.next)
	default:
		var by *Record
		errStop := errors.New("stop")
		err := s.scan(ctx, p.id, p.next, first, []span{{p.next, first}}, func(_ uint64, r *Record) error {
			if r.Epoch > mine {
				by = r
				return errStop
			}
			return nil
		})
		if by != nil {
			s.fenced(p, by)
			return fmt.Errorf("offsets: coordinator log partition %d: %w: %w (epoch %d of node %d, this gateway's %d)",
				p.id, kerr.NotCoordinator, errFenced, by.Epoch, by.Node, mine)
		}
		if err != nil {
			return fmt.Errorf("offsets: checking coordinator log partition %d before offset %d: %w: %w", p.id, first, kerr.CoordinatorLoadInProgress, err)
		}
	}
	p.next = first + uint64(n)
	return nil
}

// fenced gives p up after another owner's takeover showed in the log: its groups answer
// NOT_COORDINATOR, and what is queued for it is dropped (drop).
func (s *Store) fenced(p *partition, by *Record) {
	p.state.Store(stateNotOwned)
	p.term.Add(1)
	p.w.dropGenerations()
	s.cfg.Logger.Error("coordinator log partition taken over by another gateway while this one still wrote to it; dropping its queued writes (clients retry with NOT_COORDINATOR)",
		"partition", p.id, "epoch", p.epoch.Load(), "other_epoch", by.Epoch, "other_node", by.Node)
	if s.cfg.OnFenced != nil {
		s.cfg.OnFenced(p.id)
	}
}

// current reports whether the writer may still write o: it was queued in p's current term of
// ownership and p is still served. An op accepted before p was released (or fenced) is
// answered NOT_COORDINATOR and nothing of it is written: the new owner coordinates its group.
func (p *partition) current(o *op) bool {
	return o.term == p.term.Load() && p.state.Load() == stateServing
}

var errReleased = fmt.Errorf("offsets: %w: the coordinator log partition changed owner", kerr.NotCoordinator)

// Epoch returns the owner epoch of log partition k while this store owns and serves it, else
// 0. The topic-state log stamps the controller's writes with the epoch of partition 0.
func (s *Store) Epoch(k int) uint64 {
	if k < 0 || k >= len(s.parts) || s.parts[k].state.Load() != stateServing {
		return 0
	}
	return s.parts[k].epoch.Load()
}

func (w *writer) dropGenerations() {
	w.gensMu.Lock()
	clear(w.gens)
	w.gensMu.Unlock()
}
