package dataplane

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/epochlog"
	"github.com/iggygw/iggy-gateway-kafka/internal/keylock"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// Leader epochs (docs/DATA-PATH.md, "Truncation and leader epochs"). Every partition starts
// in epoch 0; each truncation the gateway detects starts a new epoch at the offset where the
// log continues. The history is kept in the leader-epoch log in Iggy, so every gateway and
// every restart sees the same epochs; the epoch of a record is derived from the history
// (the latest epoch starting at or before its offset), as Kafka's leader-epoch cache does.

// EpochLog persists leader epochs; *epochlog.Log implements it.
type EpochLog interface {
	// ReadNew returns the records appended since the previous call.
	ReadNew(ctx context.Context) ([]epochlog.Record, error)
	Append(ctx context.Context, r epochlog.Record) error
}

// epochRefreshInterval spaces the leader-epoch log reads made because a client named an
// epoch this gateway does not know yet (another gateway bumped it).
const epochRefreshInterval = time.Second

// epochStart is where one epoch of a partition begins, and the log end its truncation
// was detected from.
type epochStart struct {
	epoch         int32
	start         uint64
	truncatedFrom uint64
}

// leaderEpochs is the epoch history of every partition that was ever truncated; partitions
// without one are in epoch 0 from offset 0. The zero value keeps epochs in memory only.
type leaderEpochs struct {
	log EpochLog // nil: not persisted (bridge off, tests)

	mu        sync.Mutex
	hist      map[partKey][]epochStart // sorted by epoch and by start; never empty when present
	refreshed time.Time                // last read of the log for an unknown epoch

	// bumps serialise the bumps of each partition (read the log, decide, append): per
	// partition, so that a bump waiting on a slow Iggy append holds up no other partition
	// (issue 25).
	bumps keylock.Locks[partKey]
	// reading is held (one token) while the log is read and what was read applied, so that a
	// bump deciding after its read sees every record read before it. A channel, not a mutex:
	// a request waiting for another's slow read gives up when its context ends.
	reading chan struct{}
	once    sync.Once
}

// apply adds epoch r.Epoch starting at r.Start unless that epoch is known (the first record
// of an epoch wins: two gateways may race to record one truncation). Like Kafka's epoch
// cache, a new epoch removes the epochs that start at or after it: their records are gone.
func (l *leaderEpochs) apply(r epochlog.Record) {
	k := partKey{Target: topicmap.Target{Stream: r.Stream, Topic: r.Topic}, Partition: r.Partition}
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hist[k]
	if h == nil {
		h = []epochStart{{epoch: 0, start: 0}}
	}
	if last := h[len(h)-1]; r.Epoch <= last.epoch {
		return
	}
	keep := h[:0]
	for _, e := range h {
		if e.start < r.Start {
			keep = append(keep, e)
		}
	}
	if l.hist == nil {
		l.hist = make(map[partKey][]epochStart)
	}
	l.hist[k] = append(keep, epochStart{epoch: r.Epoch, start: r.Start, truncatedFrom: r.TruncatedFrom})
}

// current is k's leader epoch.
func (l *leaderEpochs) current(k partKey) int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.hist[k]; len(h) > 0 {
		return h[len(h)-1].epoch
	}
	return 0
}

// at returns the epoch of the record at offset of k and, when a later epoch starts after
// it, that epoch's start (a fetched batch must end there: one batch has one epoch).
func (l *leaderEpochs) at(k partKey, offset uint64) (epoch int32, next uint64, hasNext bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hist[k]
	i := sort.Search(len(h), func(i int) bool { return h[i].start > offset }) // first epoch after offset
	if i < len(h) {
		next, hasNext = h[i].start, true
	}
	if i == 0 {
		return 0, next, hasNext // only epoch 0 starts at 0 unless a later one replaced it
	}
	return h[i-1].epoch, next, hasNext
}

// endOffset answers OffsetsForLeaderEpoch for epoch requested of k, whose log ends at hw:
// the largest epoch at or below requested and the offset where it ends (the start of the
// next epoch, or hw for the current one), as Kafka's leader-epoch cache does; -1, -1 when
// requested is above every known epoch or undefined.
func (l *leaderEpochs) endOffset(k partKey, requested int32, hw uint64) (int32, int64) {
	if requested < 0 {
		return -1, -1
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hist[k]
	if len(h) == 0 {
		h = []epochStart{{epoch: 0, start: 0}}
	}
	if requested == h[len(h)-1].epoch {
		return requested, int64(hw)
	}
	hi := sort.Search(len(h), func(i int) bool { return h[i].epoch > requested })
	if hi == len(h) {
		return -1, -1
	}
	if hi == 0 {
		return requested, int64(h[0].start) // older than every known epoch
	}
	return h[hi-1].epoch, int64(h[hi].start)
}

// refresh applies the records other gateways (or earlier runs) appended.
func (l *leaderEpochs) refresh(ctx context.Context) error {
	if l.log == nil {
		return nil
	}
	l.once.Do(func() { l.reading = make(chan struct{}, 1) })
	select {
	case l.reading <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.reading }()
	recs, err := l.log.ReadNew(ctx)
	for _, r := range recs {
		l.apply(r)
	}
	return err
}

// validate checks a request's current_leader_epoch against k's epoch as Kafka does: -1
// (none sent) passes, an older one is FENCED_LEADER_EPOCH, a newer one is
// UNKNOWN_LEADER_EPOCH (both retriable for clients) after the log was read once more in
// case another gateway bumped it.
func (l *leaderEpochs) validate(ctx context.Context, k partKey, requested int32) int16 {
	if requested < 0 {
		return 0
	}
	cur := l.current(k)
	if requested > cur && l.refreshDue() {
		_ = l.refresh(ctx) // a failed read leaves the answer at UNKNOWN_LEADER_EPOCH, retried
		cur = l.current(k)
	}
	switch {
	case requested < cur:
		return kerr.FencedLeaderEpoch.Code
	case requested > cur:
		return kerr.UnknownLeaderEpoch.Code
	}
	return 0
}

func (l *leaderEpochs) refreshDue() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := time.Now(); now.Sub(l.refreshed) >= epochRefreshInterval {
		l.refreshed = now
		return true
	}
	return false
}

// bump records that k's log end was found at to after having been at from, and returns
// the epoch the partition is in now. A truncation another gateway already recorded (its
// latest epoch starts at or before to, detected from an end at or past from) is not
// recorded again. A record that cannot be appended is still applied here (this gateway
// serves the right answers until it restarts) and the error returned.
func (l *leaderEpochs) bump(ctx context.Context, k partKey, from, to uint64, now time.Time) (epoch int32, recorded bool, err error) {
	unlock, err := l.bumps.Lock(ctx, k)
	if err != nil {
		return l.current(k), false, err
	}
	defer unlock()
	if err := l.refresh(ctx); err != nil {
		return l.current(k), false, err
	}
	l.mu.Lock()
	var last epochStart
	if h := l.hist[k]; len(h) > 0 {
		last = h[len(h)-1]
	}
	l.mu.Unlock()
	if last.epoch > 0 && last.start <= to && last.truncatedFrom >= from {
		return last.epoch, false, nil
	}
	r := epochlog.Record{Stream: k.Stream, Topic: k.Topic, Partition: k.Partition, Epoch: last.epoch + 1,
		Start: to, TruncatedFrom: from, Time: now.UnixMilli()}
	if l.log != nil {
		err = l.log.Append(ctx, r)
	}
	l.apply(r)
	return r.Epoch, true, err
}
