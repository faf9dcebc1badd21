package offsets

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

// errNoCheckpoint means a checkpoint could not be read where one was expected.
var errNoCheckpoint = errors.New("checkpoint unreadable")

// Load creates the coordinator log if needed and rebuilds the view from it: per log
// partition, the latest complete checkpoint plus the records after it. A damaged checkpoint
// is replaced by an earlier one (or a full replay) unless Config.Recovery is RecoverFail; a
// record it cannot decode stops it unless Config.Recovery is RecoverSkip.
func (s *Store) Load(ctx context.Context) error {
	if s.loaded.Load() {
		return errors.New("offsets: Load called twice")
	}
	if err := s.log.Ensure(ctx); err != nil {
		return fmt.Errorf("offsets: coordinator log: %w", err)
	}
	for _, p := range s.parts {
		recovered, ep, end, err := s.loadPartition(ctx, p)
		if err != nil {
			return err
		}
		// Even a single gateway fences: a previous process of it (or a second gateway
		// started by mistake) may still be writing.
		if err := s.claim(ctx, p, ep, end); err != nil {
			return err
		}
		// Bound the next startup, and after a recovery spare the next one the same search.
		if recovered || p.sinceCheckpoint >= s.cfg.CheckpointEvery {
			_ = s.writeCheckpoint(ctx, p) // logged on failure
		}
	}
	for _, p := range s.parts {
		p.state.Store(stateServing)
		go s.run(p)
	}
	s.loaded.Store(true)
	return nil
}

// loadPartition rebuilds p's view from the log: the latest usable checkpoint plus the
// records after it, of the current owner epoch. It returns the epochs at the end it read to.
func (s *Store) loadPartition(ctx context.Context, p *partition) (recovered bool, ep epochs, end uint64, err error) {
	end, err = s.log.End(ctx, p.id)
	if err != nil {
		return false, ep, 0, fmt.Errorf("offsets: coordinator log partition %d: %w", p.id, err)
	}
	v, checkpoint, from := make(view), uint64(NoCheckpoint), uint64(0)
	var damagedSpans []span // the damaged checkpoints' chunks, which replay skips
	if end > 0 {
		cv, at, next, epoch, err := s.latestCheckpoint(ctx, p.id, end)
		var damaged *damagedCheckpoint
		switch {
		case errors.As(err, &damaged) && s.cfg.Recovery != RecoverFail:
			var tried []uint64
			if cv, at, next, epoch, tried, err = s.earlierCheckpoint(ctx, p.id, damaged.at); err != nil {
				return false, ep, 0, err
			}
			recovered = true
			for _, bad := range append(tried, damaged.at) {
				damagedSpans = append(damagedSpans, span{bad, s.checkpointSpan(ctx, p.id, bad, end)})
			}
			s.cfg.Logger.Error("coordinator log checkpoint damaged; recovering from an earlier checkpoint (or the start) and replaying every record after it",
				"partition", p.id, "damaged_checkpoint", int64(damaged.at), "log_end", end,
				"recovery_checkpoint", int64(at), "replay_from", next, "replay_to", end, "err", damaged.err)
			if s.cfg.OnRecovery != nil {
				s.cfg.OnRecovery(p.id)
			}
		case err != nil:
			return false, ep, 0, err
		}
		v, checkpoint, from, ep.cur = cv, at, next, epoch
	}
	replayed := 0
	err = s.scan(ctx, p.id, from, end, damagedSpans, func(off uint64, r *Record) error {
		// A later checkpoint only repeats what replay already has; a record of a superseded
		// owner epoch is ignored.
		if ep.admit(r) && r.Kind != KindCheckpoint {
			v.apply(r)
		}
		replayed++
		return nil
	})
	if err != nil {
		return false, ep, 0, err
	}
	p.mu.Lock()
	p.groups = v
	p.mu.Unlock()
	p.checkpoint, p.sinceCheckpoint = checkpoint, replayed
	s.cfg.Logger.Debug("coordinator log partition loaded", "partition", p.id, "end", end,
		"checkpoint", int64(checkpoint), "replayed", replayed, "groups", len(v), "epoch", ep.cur)
	return recovered, ep, end, nil
}

// damagedCheckpoint is the error of a checkpoint that cannot be used: unreadable,
// incomplete, or pointed to past the end of the log (Iggy lost a tail of the log and reused
// its offsets).
type damagedCheckpoint struct {
	at  uint64 // its first offset; NoCheckpoint when the record pointing to it is unreadable
	err error
}

func (e *damagedCheckpoint) Error() string {
	return fmt.Sprintf("checkpoint at %d: %v", int64(e.at), e.err)
}

func (e *damagedCheckpoint) Unwrap() error { return e.err }

// latestCheckpoint finds the latest complete checkpoint of a non-empty partition: the one
// that ends the partition (written at a clean shutdown), else the one the last record points
// to. It returns the view the checkpoint holds, its first offset, the offset after it and
// its owner epoch. Without any checkpoint the view is empty and replay starts at 0. A
// checkpoint that cannot be used is a *damagedCheckpoint.
func (s *Store) latestCheckpoint(ctx context.Context, part int, end uint64) (view, uint64, uint64, uint64, error) {
	last, err := s.readAt(ctx, part, end-1)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	r, err := DecodeRecord(last.Data)
	if err != nil {
		err = fmt.Errorf("offsets: coordinator log partition %d offset %d: %w", part, last.Offset, err)
		if s.cfg.Recovery != RecoverSkip {
			return nil, 0, 0, 0, fmt.Errorf("%w (refusing to start; recovery mode skip skips such records)", err)
		}
		return nil, 0, 0, 0, &damagedCheckpoint{at: NoCheckpoint, err: err}
	}
	if r.Kind == KindCheckpoint && r.Seq == r.Total-1 && uint64(r.Total) <= end {
		at := end - uint64(r.Total)
		if v, next, epoch, err := s.readCheckpoint(ctx, part, at, &r.CheckpointID); err == nil {
			return v, at, next, epoch, nil
		}
		// Not contiguous, or displaced by another writer's records: fall back to the pointer.
	}
	if r.Checkpoint == NoCheckpoint {
		return make(view), NoCheckpoint, 0, 0, nil
	}
	if r.Checkpoint >= end {
		return nil, 0, 0, 0, &damagedCheckpoint{at: r.Checkpoint, err: fmt.Errorf("%w: partition %d offset %d points to checkpoint offset %d past the end %d",
			errNoCheckpoint, part, last.Offset, r.Checkpoint, end)}
	}
	v, next, epoch, err := s.readCheckpoint(ctx, part, r.Checkpoint, nil)
	if err != nil {
		return nil, 0, 0, 0, &damagedCheckpoint{at: r.Checkpoint, err: err}
	}
	return v, r.Checkpoint, next, epoch, nil
}

// span is a range of log offsets [from, to).
type span struct{ from, to uint64 }

// checkpointSpan returns the end of the damaged checkpoint starting at at: the run of
// records from at that are undecodable or its chunks in sequence, up to its chunk count
// when a chunk tells it. Replay skips undecodable records there: they are that checkpoint.
func (s *Store) checkpointSpan(ctx context.Context, part int, at, end uint64) uint64 {
	if at >= end {
		return at
	}
	limit := end
	for off := at; off < limit; {
		entries, err := s.log.ReadFrom(ctx, part, off, s.cfg.ReadBatch)
		if err != nil || len(entries) == 0 {
			return off
		}
		for _, e := range entries {
			if e.Offset != off || off >= limit {
				return off
			}
			if r, err := DecodeRecord(e.Data); err == nil {
				if r.Kind != KindCheckpoint || uint64(r.Seq) != off-at {
					return off
				}
				limit = min(limit, at+uint64(r.Total))
			}
			off++
		}
	}
	return limit
}

// earlierCheckpoint looks for the latest usable checkpoint before the damaged one at bad:
// it reads the log backwards from bad (or from the end) for records pointing to an earlier
// checkpoint and tries each. Without one the view is empty and replay starts at offset 0
// (the log is never truncated at its start, so a full replay holds every record). It also
// returns the first offsets of the damaged checkpoints it tried.
func (s *Store) earlierCheckpoint(ctx context.Context, part int, bad uint64) (v view, at, next, epoch uint64, tried []uint64, err error) {
	end, err := s.log.End(ctx, part)
	if err != nil {
		return nil, 0, 0, 0, nil, fmt.Errorf("offsets: coordinator log partition %d: %w", part, err)
	}
	for hi := min(end, bad); hi > 0; {
		lo := hi - min(hi, uint64(s.cfg.ReadBatch))
		entries, err := s.log.ReadFrom(ctx, part, lo, int(hi-lo))
		if err != nil {
			return nil, 0, 0, 0, nil, fmt.Errorf("offsets: reading coordinator log partition %d at %d: %w", part, lo, err)
		}
		for i := len(entries) - 1; i >= 0; i-- {
			r, err := DecodeRecord(entries[i].Data)
			if err == nil && r.Checkpoint == NoCheckpoint {
				return make(view), NoCheckpoint, 0, 0, tried, nil // nothing before it had a checkpoint
			}
			if err != nil || r.Checkpoint >= bad || r.Checkpoint >= entries[i].Offset {
				continue // unreadable (the replay decides about it), or no earlier checkpoint
			}
			if v, next, epoch, err := s.readCheckpoint(ctx, part, r.Checkpoint, nil); err == nil {
				return v, r.Checkpoint, next, epoch, tried, nil
			}
			tried = append(tried, r.Checkpoint)
			bad = r.Checkpoint
		}
		hi = lo
	}
	return make(view), NoCheckpoint, 0, 0, tried, nil
}

// readCheckpoint reads the checkpoint whose first chunk is at offset at (with the given id,
// if any) and returns its view, the offset after its last chunk and its owner epoch. A
// checkpoint whose writer expected it elsewhere is refused: another writer's records came
// first, so it may be a superseded owner's (fence.go).
func (s *Store) readCheckpoint(ctx context.Context, part int, at uint64, id *uint64) (view, uint64, uint64, error) {
	v := make(view)
	var total, seen uint32
	var epoch uint64
	next := at
	errStop := errors.New("stop")
	err := s.scan(ctx, part, at, ^uint64(0), nil, func(off uint64, r *Record) error {
		switch {
		case r.Kind != KindCheckpoint:
			return fmt.Errorf("offset %d holds a %s record, not checkpoint chunk %d", off, r.Kind, seen)
		case seen == 0 && id != nil && r.CheckpointID != *id:
			return fmt.Errorf("offset %d holds checkpoint %x, want %x", off, r.CheckpointID, *id)
		case seen == 0 && r.At != NoCheckpoint && r.At != off:
			return fmt.Errorf("offset %d holds a checkpoint written for offset %d (displaced by another writer)", off, r.At)
		case seen == 0:
			id, total, epoch = &r.CheckpointID, r.Total, r.Epoch
		}
		if r.CheckpointID != *id || r.Seq != seen || r.Total != total || r.Epoch != epoch {
			return fmt.Errorf("offset %d holds chunk %d/%d of checkpoint %x, want chunk %d/%d of %x",
				off, r.Seq, r.Total, r.CheckpointID, seen, total, *id)
		}
		v.apply(r)
		seen++
		next = off + 1
		if seen == total {
			return errStop
		}
		return nil
	})
	switch {
	case errors.Is(err, errStop):
		return v, next, epoch, nil
	case err == nil:
		err = fmt.Errorf("log ends after chunk %d of %d", seen, total)
	}
	return nil, 0, 0, fmt.Errorf("%w: partition %d checkpoint at %d: %w", errNoCheckpoint, part, at, err)
}

// scan decodes the records of part in [from, end) and passes each to fn, stopping at the
// log's end, at fn's first error, or at a record it cannot decode (which is skipped with an
// error log in recovery mode skip, or when it lies in one of the skip spans: a damaged
// checkpoint's chunks).
func (s *Store) scan(ctx context.Context, part int, from, end uint64, skip []span, fn func(uint64, *Record) error) error {
	for off := from; off < end; {
		entries, err := s.log.ReadFrom(ctx, part, off, s.cfg.ReadBatch)
		if err != nil {
			return fmt.Errorf("offsets: reading coordinator log partition %d at %d: %w", part, off, err)
		}
		if len(entries) == 0 {
			if end == ^uint64(0) {
				return nil // read to whatever end the log has
			}
			return fmt.Errorf("offsets: coordinator log partition %d has no records from offset %d, below its end %d", part, off, end)
		}
		for _, e := range entries {
			if e.Offset >= end {
				return nil
			}
			r, err := DecodeRecord(e.Data)
			if err != nil {
				if s.cfg.Recovery != RecoverSkip && !slices.ContainsFunc(skip, func(sp span) bool { return sp.from <= e.Offset && e.Offset < sp.to }) {
					return fmt.Errorf("offsets: coordinator log partition %d offset %d: %w (refusing to start; recovery mode skip skips such records)", part, e.Offset, err)
				}
				s.cfg.Logger.Error("skipping corrupt coordinator log record", "partition", part, "offset", e.Offset, "err", err)
				continue
			}
			if err := fn(e.Offset, r); err != nil {
				return err
			}
		}
		off = entries[len(entries)-1].Offset + 1
	}
	return nil
}

func (s *Store) readAt(ctx context.Context, part int, off uint64) (iggylog.Entry, error) {
	entries, err := s.log.ReadFrom(ctx, part, off, 1)
	if err != nil {
		return iggylog.Entry{}, fmt.Errorf("offsets: reading coordinator log partition %d at %d: %w", part, off, err)
	}
	if len(entries) == 0 || entries[0].Offset != off {
		return iggylog.Entry{}, fmt.Errorf("offsets: coordinator log partition %d has no record at offset %d", part, off)
	}
	return entries[0], nil
}
