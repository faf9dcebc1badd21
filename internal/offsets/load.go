package offsets

import (
	"context"
	"errors"
	"fmt"
)

// errNoCheckpoint means a checkpoint could not be read where one was expected.
var errNoCheckpoint = errors.New("checkpoint unreadable")

// Load creates the coordinator log if needed and rebuilds the view from it: per log
// partition, the latest complete checkpoint plus the records after it. It fails on a record it
// cannot decode unless Config.SkipCorrupt is set.
func (s *Store) Load(ctx context.Context) error {
	if s.loaded.Load() {
		return errors.New("offsets: Load called twice")
	}
	if err := s.log.Ensure(ctx); err != nil {
		return fmt.Errorf("offsets: coordinator log: %w", err)
	}
	for _, p := range s.parts {
		if err := s.loadPartition(ctx, p); err != nil {
			return err
		}
		if p.sinceCheckpoint >= s.cfg.CheckpointEvery {
			_ = s.writeCheckpoint(ctx, p) // bound the next startup; logged on failure
		}
	}
	for _, p := range s.parts {
		go s.run(p)
	}
	s.loaded.Store(true)
	return nil
}

func (s *Store) loadPartition(ctx context.Context, p *partition) error {
	end, err := s.log.End(ctx, p.id)
	if err != nil {
		return fmt.Errorf("offsets: coordinator log partition %d: %w", p.id, err)
	}
	v, checkpoint, from := make(view), uint64(NoCheckpoint), uint64(0)
	if end > 0 {
		if cv, at, next, err := s.latestCheckpoint(ctx, p.id, end); err == nil {
			v, checkpoint, from = cv, at, next
		} else if !errors.Is(err, errNoCheckpoint) || !s.cfg.SkipCorrupt {
			return err
		} else {
			s.cfg.Logger.Error("coordinator log checkpoint unreadable; replaying the whole partition", "partition", p.id, "err", err)
		}
	}
	replayed := 0
	err = s.scan(ctx, p.id, from, end, func(off uint64, r *Record) error {
		if r.Kind != KindCheckpoint { // a later checkpoint only repeats what replay already has
			v.apply(r)
		}
		replayed++
		return nil
	})
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.groups = v
	p.mu.Unlock()
	p.checkpoint, p.sinceCheckpoint = checkpoint, replayed
	s.cfg.Logger.Debug("coordinator log partition loaded", "partition", p.id, "end", end,
		"checkpoint", int64(checkpoint), "replayed", replayed, "groups", len(v))
	return nil
}

// latestCheckpoint finds the latest complete checkpoint of a non-empty partition: the one
// that ends the partition (written at a clean shutdown), else the one the last record points
// to. It returns the view the checkpoint holds, its first offset and the offset after it.
// Without any checkpoint the view is empty and replay starts at 0.
func (s *Store) latestCheckpoint(ctx context.Context, part int, end uint64) (view, uint64, uint64, error) {
	last, err := s.readAt(ctx, part, end-1)
	if err != nil {
		return nil, 0, 0, err
	}
	r, err := DecodeRecord(last.Data)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%w: partition %d offset %d: %w", errNoCheckpoint, part, last.Offset, err)
	}
	if r.Kind == KindCheckpoint && r.Seq == r.Total-1 && uint64(r.Total) <= end {
		at := end - uint64(r.Total)
		if v, next, err := s.readCheckpoint(ctx, part, at, &r.CheckpointID); err == nil {
			return v, at, next, nil
		}
		// Not contiguous after all: fall back to the pointer.
	}
	if r.Checkpoint == NoCheckpoint {
		return make(view), NoCheckpoint, 0, nil
	}
	if r.Checkpoint >= end {
		return nil, 0, 0, fmt.Errorf("%w: partition %d offset %d points to checkpoint offset %d past the end %d",
			errNoCheckpoint, part, last.Offset, r.Checkpoint, end)
	}
	v, next, err := s.readCheckpoint(ctx, part, r.Checkpoint, nil)
	if err != nil {
		return nil, 0, 0, err
	}
	return v, r.Checkpoint, next, nil
}

// readCheckpoint reads the checkpoint whose first chunk is at offset at (with the given id,
// if any) and returns its view and the offset after its last chunk.
func (s *Store) readCheckpoint(ctx context.Context, part int, at uint64, id *uint64) (view, uint64, error) {
	v := make(view)
	var total, seen uint32
	next := at
	errStop := errors.New("stop")
	err := s.scan(ctx, part, at, ^uint64(0), func(off uint64, r *Record) error {
		switch {
		case r.Kind != KindCheckpoint:
			return fmt.Errorf("offset %d holds a %s record, not checkpoint chunk %d", off, r.Kind, seen)
		case seen == 0 && id != nil && r.CheckpointID != *id:
			return fmt.Errorf("offset %d holds checkpoint %x, want %x", off, r.CheckpointID, *id)
		case seen == 0:
			id, total = &r.CheckpointID, r.Total
		}
		if r.CheckpointID != *id || r.Seq != seen || r.Total != total {
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
		return v, next, nil
	case err == nil:
		err = fmt.Errorf("log ends after chunk %d of %d", seen, total)
	}
	return nil, 0, fmt.Errorf("%w: partition %d checkpoint at %d: %w", errNoCheckpoint, part, at, err)
}

// scan decodes the records of part in [from, end) and passes each to fn, stopping at the
// log's end, at fn's first error, or at a record it cannot decode (which is skipped with an
// error log under SkipCorrupt).
func (s *Store) scan(ctx context.Context, part int, from, end uint64, fn func(uint64, *Record) error) error {
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
				if !s.cfg.SkipCorrupt {
					return fmt.Errorf("offsets: coordinator log partition %d offset %d: %w (refusing to start; SkipCorrupt skips such records)", part, e.Offset, err)
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

func (s *Store) readAt(ctx context.Context, part int, off uint64) (Entry, error) {
	entries, err := s.log.ReadFrom(ctx, part, off, 1)
	if err != nil {
		return Entry{}, fmt.Errorf("offsets: reading coordinator log partition %d at %d: %w", part, off, err)
	}
	if len(entries) == 0 || entries[0].Offset != off {
		return Entry{}, fmt.Errorf("offsets: coordinator log partition %d has no record at offset %d", part, off)
	}
	return entries[0], nil
}
