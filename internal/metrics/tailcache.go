package metrics

import "github.com/prometheus/client_golang/prometheus"

// TailCacheStats is what the tail cache reports (tailcache.Cache.Stats).
type TailCacheStats struct {
	Hits, Misses, Evictions, Resets, Invalidations uint64
	Shrinks                                        uint64
	Batches, Bytes, Limit                          int
}

// WatchTailCache exports the tail cache's counters and contents (docs/PERFORMANCE.md, "Tail
// cache"), read at each scrape.
func (m *Metrics) WatchTailCache(stats func() TailCacheStats) {
	m.counterFunc("tail_cache_hits_total", "Fetch partition reads answered from the tail cache.",
		func() float64 { return float64(stats().Hits) })
	m.counterFunc("tail_cache_misses_total", "Fetch partition reads whose offset was not in the tail cache (read from Iggy).",
		func() float64 { return float64(stats().Misses) })
	m.counterFunc("tail_cache_evictions_total", "Batches evicted from the tail cache for room (IGGY_KAFKA_TAIL_CACHE_BYTES).",
		func() float64 { return float64(stats().Evictions) })
	m.counterFunc("tail_cache_resets_total", "Partition runs restarted because a write did not continue them (another writer appended in between).",
		func() float64 { return float64(stats().Resets) })
	m.counterFunc("tail_cache_invalidations_total", "Invalidations of the tail cache (topic deleted, partition truncated).",
		func() float64 { return float64(stats().Invalidations) })
	m.gaugeFunc("tail_cache_batches", "Record batches held by the tail cache.",
		func() float64 { return float64(stats().Batches) })
	m.gaugeFunc("tail_cache_bytes", "Bytes the tail cache holds, counted against IGGY_KAFKA_TAIL_CACHE_BYTES.",
		func() float64 { return float64(stats().Bytes) })
	m.gaugeFunc("tail_cache_limit_bytes", "Bytes the tail cache may hold now: IGGY_KAFKA_TAIL_CACHE_BYTES (or the size derived from memory when it is auto), lowered while the process is near its soft memory limit.",
		func() float64 { return float64(stats().Limit) })
	m.counterFunc("tail_cache_pressure_shrinks_total", "Times the tail cache's limit was halved because the process was near its soft memory limit (the cache gives memory back first).",
		func() float64 { return float64(stats().Shrinks) })
}

// counterFunc registers a counter whose value fn reads at each scrape.
func (m *Metrics) counterFunc(name, help string, fn func() float64) {
	c := prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, fn)
	m.add(c, name, "counter", help, nil)
}
