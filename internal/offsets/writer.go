package offsets

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
)

// writer is the single writer of one log partition (docs/COORDINATOR-LOG.md §4): one
// goroutine appends every record, in the order it decides them, so that decisions taken
// against the view (is the group there? which offsets exist?) hold when the records land.
// Writes queued while an append is in flight go out together in the next append (group
// commit); the queue is bounded, so callers wait instead of memory growing.
type writer struct {
	queue chan *op
	stop  chan struct{} // closed by Close: drain, checkpoint, exit
	done  chan struct{} // closed when the goroutine has exited

	// Generations reported by the group coordinator, latest per group. The coordinator must
	// not block, so these bypass the queue; one entry per group bounds them.
	gensMu sync.Mutex
	gens   map[string]groups.GenerationEvent
	wake   chan struct{} // capacity 1: generations are pending

	// control runs a function on the writer goroutine between appends (Acquire's reload).
	control chan func()

	closeCtx context.Context // for the final checkpoint; set before stop is closed
	closeErr error           // the final checkpoint's error; read after done
}

// op is one write request. Either records are fixed (a commit: they do not depend on the
// view and coalesce with other writes), or decide computes them from the view after every
// earlier write; such an op starts an append of its own.
type op struct {
	ctx     context.Context
	records []Record
	decide  func(v view) []Record // called by the writer with the view read-locked
	done    chan error            // capacity 1
	term    uint64                // the partition's term of ownership when queued (fence.go)
}

func newWriter(queue int) *writer {
	return &writer{
		queue: make(chan *op, queue),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		gens:  make(map[string]groups.GenerationEvent),
		wake:  make(chan struct{}, 1),

		control: make(chan func()),
	}
}

// submit queues o on p's writer and waits for its outcome. It waits for room in the queue
// (backpressure) and for the append, both bounded by ctx.
func (s *Store) submit(ctx context.Context, p *partition, o *op) error {
	o.ctx, o.done, o.term = ctx, make(chan error, 1), p.term.Load()
	if err := p.serving(); err != nil { // released since the caller checked: o.term is newer
		return err
	}
	s.closeMu.RLock()
	if s.closed.Load() {
		s.closeMu.RUnlock()
		return kerr.CoordinatorNotAvailable
	}
	select {
	case p.w.queue <- o:
	case <-ctx.Done():
		s.closeMu.RUnlock()
		return timedOut(ctx)
	}
	s.closeMu.RUnlock()
	select {
	case err := <-o.done:
		return err
	case <-ctx.Done():
		// The write may still happen; it is not acknowledged either way.
		return timedOut(ctx)
	}
}

func timedOut(ctx context.Context) error {
	return fmt.Errorf("offsets: %w: %w", kerr.RequestTimedOut, context.Cause(ctx))
}

// queueGeneration records ev as the group's latest generation event (replacing an earlier
// one not written yet: the latest decides the stored state) and wakes the writer. It never
// blocks.
func (w *writer) queueGeneration(ev groups.GenerationEvent) {
	w.gensMu.Lock()
	w.gens[ev.Group] = ev
	w.gensMu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *writer) takeGenerations() []groups.GenerationEvent {
	w.gensMu.Lock()
	defer w.gensMu.Unlock()
	if len(w.gens) == 0 {
		return nil
	}
	out := make([]groups.GenerationEvent, 0, len(w.gens))
	for _, ev := range w.gens {
		out = append(out, ev)
	}
	clear(w.gens)
	return out
}

// run is p's writer goroutine.
func (s *Store) run(p *partition) {
	w := p.w
	defer close(w.done)
	var held *op
	for {
		first := held
		if first == nil {
			select {
			case first = <-w.queue:
			case <-w.wake:
			case f := <-w.control:
				f()
				continue
			case <-w.stop:
				s.drain(p)
				return
			}
		}
		held = s.roundSafe(p, first)
	}
}

// roundSafe is round with a panic recovered (internal/supervise): the ops of that round get
// no answer (their callers give up at their deadlines) and the writer goes on with the next
// round instead of leaving the partition's commits unwritten or ending the process.
func (s *Store) roundSafe(p *partition, first *op) (held *op) {
	defer supervise.Recover(s.cfg.Logger, "offsets_writer", nil)
	return s.round(p, first)
}

// drain writes whatever is still queued, then the final checkpoint. Close guarantees that
// nothing is queued any more once stop is closed.
func (s *Store) drain(p *partition) {
	var held *op
	for {
		first := held
		if first == nil {
			select {
			case first = <-p.w.queue:
			default:
			}
		}
		held = s.round(p, first)
		if held == nil && len(p.w.queue) == 0 && p.w.pendingGenerations() == 0 {
			break
		}
	}
	// Only the owner writes a checkpoint: another gateway may be writing this partition.
	if p.sinceCheckpoint > 0 && p.serving() == nil {
		p.w.closeErr = s.writeCheckpoint(p.w.closeCtx, p)
	}
}

func (w *writer) pendingGenerations() int {
	w.gensMu.Lock()
	defer w.gensMu.Unlock()
	return len(w.gens)
}

// batch is what one append carries.
type batch struct {
	records []Record
	data    [][]byte
	bytes   int
	ops     []*op
	gens    int // generation records, which no op waits for
}

// round performs one append: first (if any) and, when first does not read the view, the
// pending generations and every fixed write already queued, up to MaxBatchBytes. It returns
// a queued op that must start the next append.
func (s *Store) round(p *partition, first *op) (held *op) {
	var b batch
	if first != nil && first.decide != nil {
		s.addOp(p, &b, first)
	} else {
		s.addGenerations(p, &b)
		if first != nil {
			s.addOp(p, &b, first)
		}
	gather:
		for b.bytes < s.cfg.MaxBatchBytes {
			select {
			case o := <-p.w.queue:
				if o.decide != nil {
					held = o
					break gather
				}
				s.addOp(p, &b, o)
			default:
				break gather
			}
		}
	}
	s.write(p, &b)
	return held
}

// addOp adds o's records to b, or answers o at once when its caller gave up or it has
// nothing to write.
func (s *Store) addOp(p *partition, b *batch, o *op) {
	if o.ctx.Err() != nil {
		o.done <- timedOut(o.ctx)
		return
	}
	if !p.current(o) {
		o.done <- errReleased
		return
	}
	recs := o.records
	if o.decide != nil {
		p.mu.RLock()
		recs = o.decide(p.groups)
		p.mu.RUnlock()
	}
	if len(recs) == 0 {
		o.done <- nil
		return
	}
	s.add(p, b, recs)
	b.ops = append(b.ops, o)
}

// addGenerations adds the records of every pending generation event. Each concerns another
// group, so deciding them all against the same view is exact.
func (s *Store) addGenerations(p *partition, b *batch) {
	evs := p.w.takeGenerations()
	if len(evs) == 0 || p.serving() != nil {
		return
	}
	p.mu.RLock()
	var recs []Record
	for _, ev := range evs {
		recs = append(recs, generationRecords(p.groups, ev.Group, ev.Generation, ev.ProtocolType, ev.Members)...)
	}
	p.mu.RUnlock()
	b.gens += len(recs)
	s.add(p, b, recs)
}

func (s *Store) add(p *partition, b *batch, recs []Record) {
	now := s.cfg.Now().UnixMilli()
	for i := range recs {
		recs[i].Checkpoint = p.checkpoint
		recs[i].Time = now
		recs[i].Epoch = p.epoch.Load()
		for _, d := range s.encodeSplit(&recs[i]) {
			b.data = append(b.data, d)
			b.bytes += len(d)
		}
	}
	b.records = append(b.records, recs...)
}

// write appends b and, once the append succeeded, applies it to the view and acknowledges
// its ops; then it writes a checkpoint when one is due.
func (s *Store) write(p *partition, b *batch) {
	if len(b.data) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.WriteTimeout)
	defer cancel()
	first, err := s.log.Append(ctx, p.id, b.data)
	if err == nil {
		err = s.landed(ctx, p, first, len(b.data)) // ignored by replay if another owner fenced p
	} else {
		s.cfg.Logger.Error("coordinator log append failed", "partition", p.id, "records", len(b.data), "err", err)
		// Whether the append happened is unknown; either way nothing was acknowledged.
		err = fmt.Errorf("offsets: append to coordinator log partition %d: %w: %w", p.id, kerr.CoordinatorLoadInProgress, err)
	}
	if err != nil {
		if b.gens > 0 {
			// A lost generation record only costs generation continuity after a restart.
			s.cfg.Logger.Warn("consumer group generations not recorded", "partition", p.id, "records", b.gens)
		}
	} else {
		p.mu.Lock()
		for i := range b.records {
			p.groups.apply(&b.records[i])
		}
		p.mu.Unlock()
		p.sinceCheckpoint += len(b.data)
		if p.sinceCheckpoint >= s.cfg.CheckpointEvery && p.serving() == nil { // a released owner writes nothing more
			_ = s.writeCheckpoint(ctx, p) // logged; retried after the next append
		}
	}
	for _, o := range b.ops {
		o.done <- err
	}
}
