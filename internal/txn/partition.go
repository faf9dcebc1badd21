package txn

import (
	"slices"
	"sync"
)

// Partition is what read_committed fetches of one partition need to know of its
// transactions (docs/TRANSACTIONS.md, "Reading committed data"): the last stable offset (the
// first offset of the earliest open transaction) and the offsets of aborted records, which
// the gateway leaves out of read_committed answers. The partition's leader keeps it: the
// data plane records each transactional batch it wrote, the coordinator's markers end the
// transactions, and the transaction log restores it after a restart (Restorer).
type Partition struct {
	mu      sync.Mutex
	open    map[int64]*openTxn // by producer id
	aborted []Range            // sorted, not overlapping
}

// openTxn is one producer's open transaction in the partition.
type openTxn struct {
	// from is the lowest offset its records can be at: the partition's end when the
	// partition joined the transaction (or the first record's offset once one is written).
	from    uint64
	batches []Range // the ranges written, in offset order
	// restored: put back from the transaction log after a restart, so the batches written
	// before it are not in batches (the data plane finds them in Iggy before an abort).
	restored bool
}

// Begin records that pid's transaction includes the partition, whose records will be at from
// or later. A transaction already open keeps its bound.
func (p *Partition) Begin(pid int64, from uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open == nil {
		p.open = map[int64]*openTxn{}
	}
	if _, ok := p.open[pid]; !ok {
		p.open[pid] = &openTxn{from: from}
	}
}

// Wrote records a transactional batch of pid written at [base, base+n). It reports false
// when pid has no open transaction here (the caller refuses such batches before writing).
func (p *Partition) Wrote(pid int64, base, n uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.open[pid]
	if o == nil {
		return false
	}
	if len(o.batches) == 0 {
		o.from = max(o.from, base) // the bound becomes exact
	}
	o.batches = append(o.batches, Range{From: base, To: base + n})
	return true
}

// End closes pid's transaction with a marker: a commit forgets its records, an abort keeps
// their ranges, which it returns.
func (p *Partition) End(pid int64, commit bool) []Range {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.open[pid]
	if o == nil {
		return nil
	}
	delete(p.open, pid)
	if commit || len(o.batches) == 0 {
		return nil
	}
	p.addAborted(o.batches)
	return slices.Clone(o.batches)
}

// Restore puts back what the transaction log says: an open transaction's bound, or aborted
// ranges.
func (p *Partition) Restore(pid int64, from uint64, open bool, aborted []Range) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if open {
		if p.open == nil {
			p.open = map[int64]*openTxn{}
		}
		if _, ok := p.open[pid]; !ok {
			p.open[pid] = &openTxn{from: from, restored: true}
		}
	}
	p.addAborted(aborted)
}

// Restored reports whether pid's open transaction here was restored from the log, so that
// records it wrote before the restart may be missing from what Wrote recorded.
func (p *Partition) Restored(pid int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.open[pid]
	return o != nil && o.restored
}

func (p *Partition) addAborted(rs []Range) {
	for _, r := range rs {
		if r.To <= r.From {
			continue
		}
		i, _ := slices.BinarySearchFunc(p.aborted, r.From, func(a Range, from uint64) int {
			switch {
			case a.From < from:
				return -1
			case a.From > from:
				return 1
			}
			return 0
		})
		p.aborted = slices.Insert(p.aborted, i, r)
	}
	// Merge overlapping or adjacent ranges, so that lookups stay a binary search.
	merged := p.aborted[:0]
	for _, r := range p.aborted {
		if n := len(merged); n > 0 && r.From <= merged[n-1].To {
			merged[n-1].To = max(merged[n-1].To, r.To)
			continue
		}
		merged = append(merged, r)
	}
	p.aborted = merged
}

// LastStable is the last stable offset given the high watermark hw: the lowest bound of an
// open transaction, or hw when none is open.
func (p *Partition) LastStable(hw uint64) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	lso := hw
	for _, o := range p.open {
		lso = min(lso, o.from)
	}
	return lso
}

// Aborted reports whether offset holds an aborted record, and if so where the aborted run
// containing it ends (a reader skips to there).
func (p *Partition) Aborted(offset uint64) (end uint64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, found := slices.BinarySearchFunc(p.aborted, offset, func(a Range, off uint64) int {
		switch {
		case a.To <= off:
			return -1
		case a.From > off:
			return 1
		}
		return 0
	})
	if !found {
		return 0, false
	}
	return p.aborted[i].To, true
}

// AnyAborted reports whether an aborted record lies in [from, to).
func (p *Partition) AnyAborted(from, to uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, _ := slices.BinarySearchFunc(p.aborted, from, func(a Range, f uint64) int {
		if a.To <= f {
			return -1
		}
		return 1
	})
	return i < len(p.aborted) && p.aborted[i].From < to
}
