package dataplane

import (
	"context"
	"slices"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/bufpool"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
	"github.com/iggygw/iggy-gateway-kafka/internal/tailcache"
)

// The tail cache (internal/tailcache, docs/PERFORMANCE.md "Tail cache"): Produce puts the
// producer's own batches in it once Iggy confirmed their offsets, and Fetch serves a
// partition from it when the fetch offset is there, without reading Iggy. Both only while
// this gateway leads the partition: another gateway's writes are read from Iggy.

func tailKey(k partKey) tailcache.Key {
	return tailcache.Key{Stream: k.Stream, Topic: k.Topic, Partition: k.Partition}
}

// TailCacheStats reports what the tail cache did and holds (zero when it is off).
func (dp *Plane) TailCacheStats() tailcache.Stats { return dp.tail.Stats() }

// cacheWritten puts p's batches, which Iggy confirmed at offsets from base, in the tail
// cache; gen is the cache's generation taken before the send.
func (dp *Plane) cacheWritten(p *producePart, gen, base uint64) {
	if dp.tail == nil {
		return
	}
	if p.records == nil || !dp.leads(p.kafka, p.out.Partition) {
		// Not cacheable: the run must not continue across these offsets, and a later
		// write's base offset will not continue it either (a gap), so nothing to do.
		return
	}
	k, epoch := tailKey(p.key), dp.epochs.current(p.key)
	var err error
	if p.shared != nil {
		err = dp.tail.PutShared(p.shared, k, gen, base, p.records, epoch)
	} else {
		err = dp.tail.Put(k, gen, base, p.records, epoch)
	}
	if err != nil {
		dp.log.Debug("produce: batches not cached", "topic", p.kafka, "partition", p.key.Partition, "err", err)
	}
}

// shareFrame hands the request's frame to the tail cache when some of ready's batches may be
// cached, so that they are cached where they lie instead of copied (tailcache.Share): the
// frame then counts against the cache's budget, not the request's, and goes back to the
// pool once the cache and the request let go. The caller calls the returned function once
// its sends are done. Nothing changes (copies) when the cache is off, nothing is cacheable
// or the frame was not read into a pooled buffer.
func (dp *Plane) shareFrame(ctx context.Context, ready []producePart) (done func()) {
	if dp.tail == nil || !slices.ContainsFunc(ready, func(p producePart) bool { return p.records != nil }) {
		return func() {}
	}
	frame := listener.TakeFrame(ctx)
	if frame == nil {
		return func() {}
	}
	shared := dp.tail.Share(frame)
	if shared == nil {
		// Larger than the whole cache: the batches are not cached, but they are still read
		// until the sends are done, so the frame goes back to the pool only then.
		return func() { bufpool.Put(frame) }
	}
	for i := range ready {
		ready[i].shared = shared
	}
	return shared.Release
}

// serveTail answers r from the tail cache when its first offset is there, and reports
// whether it did. Like an Iggy read it returns whole batches up to r.limit, the first one
// whatever its size when minOne, none past r.hw; the first batch may begin before r.from
// (clients skip the records before their fetch offset, as with Kafka's batches).
func (dp *Plane) serveTail(fp *fetchPart, r *readRange, minOne bool) bool {
	if dp.tail == nil || !dp.leads(fp.topic, fp.out.Partition) {
		return false
	}
	if r.aborted != nil && r.aborted.AnyAborted(r.from, r.hw) {
		// The cache holds the producers' batches as sent: aborted records would be served.
		return false
	}
	var scratch [16][]byte
	views, hold := dp.tail.Read(tailKey(r.key), r.from, r.hw, r.limit, scratch[:0])
	switch {
	case len(views) == 0:
		return false
	case !minOne && len(views[0]) > r.limit:
		// Only the first non-empty partition may exceed its limit (KIP-74).
		hold.Release()
	case len(views) == 1:
		// Shared with the cache, never modified; held until the response is written.
		fp.out.RecordBatches, fp.hold = views[0], hold
	default:
		total := 0
		for _, v := range views {
			total += len(v)
		}
		buf := bufpool.Get(total)
		for _, v := range views {
			buf = append(buf, v...)
		}
		hold.Release()
		fp.keepRecords(buf)
	}
	return true
}

// WatchMemoryPressure checks the process's memory against the Go runtime's soft memory limit
// every interval (read: tailcache.ReadMemory; tests inject readings) and lets the tail cache
// give memory back first when the process nears the limit, and take it again once the pressure
// is over (tailcache.Cache.AdjustForPressure; docs/LIMITS.md, "Sizing the process"). The
// check runs on a goroutine of the Plane until Close; a panic in one check is recovered,
// logged and counted (internal/supervise, component "tail_cache_pressure"). Nothing to do when
// the cache is off.
func (dp *Plane) WatchMemoryPressure(interval time.Duration, read func() tailcache.MemoryReading) {
	if dp.tail == nil || interval <= 0 {
		return
	}
	dp.data.mu.Lock()
	defer dp.data.mu.Unlock()
	if dp.closed {
		return
	}
	dp.background.Go(func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-dp.stopped:
				return
			case <-tick.C:
			}
			dp.adjustTailCache(read)
		}
	})
}

func (dp *Plane) adjustTailCache(read func() tailcache.MemoryReading) {
	defer supervise.Recover(dp.log, "tail_cache_pressure", nil)
	m := read()
	before, after := dp.tail.AdjustForPressure(m)
	switch {
	case after < before:
		dp.log.Warn("memory near the soft limit: tail cache shrunk to give memory back first",
			"memory_bytes", m.InUse, "soft_limit_bytes", m.SoftLimit, "tail_cache_limit_bytes", after, "was", before)
	case after > before:
		dp.log.Info("memory pressure eased: tail cache limit raised",
			"memory_bytes", m.InUse, "soft_limit_bytes", m.SoftLimit, "tail_cache_limit_bytes", after, "was", before)
	}
}
