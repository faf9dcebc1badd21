package tailcache

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
)

// Memory pressure (issue 25, docs/LIMITS.md "Sizing the process"). The gateway sets the Go
// runtime's soft memory limit to the request memory + the tail cache + a baseline. Near that
// limit the collector runs ever more often; the tail cache is the one large holder of memory
// that can give it back without failing a request (a miss only reads from Iggy), so it shrinks
// first: each check that finds the process at or above pressureHigh of the soft limit halves
// what the cache may hold and evicts down to it; checks below pressureLow double it back, up
// to TAIL_CACHE_BYTES.
const (
	pressureHigh = 0.90
	pressureLow  = 0.75
	// pressureFloor is the smallest limit a shrinking cache keeps before it goes to nothing,
	// and where it starts growing back from.
	pressureFloor = 1 << 20
)

// MemoryReading is the memory the Go runtime counts against its soft limit, and that limit
// (math.MaxInt64 or less than 1: none).
type MemoryReading struct {
	InUse, SoftLimit int64
}

var memorySamples = []string{"/memory/classes/total:bytes", "/memory/classes/heap/released:bytes"}

// ReadMemory reads the process's memory as the runtime's soft limit counts it (everything the
// runtime has mapped, less what it returned to the OS) and the soft limit.
func ReadMemory() MemoryReading {
	s := make([]metrics.Sample, len(memorySamples))
	for i, name := range memorySamples {
		s[i].Name = name
	}
	metrics.Read(s)
	var total, released uint64
	if s[0].Value.Kind() == metrics.KindUint64 {
		total = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		released = s[1].Value.Uint64()
	}
	return MemoryReading{InUse: int64(total - min(released, total)), SoftLimit: debug.SetMemoryLimit(-1)}
}

// AdjustForPressure applies one memory reading: it lowers what the cache may hold under
// pressure (evicting down to it and letting go of kept buffers) and raises it back once the
// pressure is over. It returns the limit before and after.
func (c *Cache) AdjustForPressure(m MemoryReading) (before, after int) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	before = c.currentLimit()
	after = before
	switch {
	case m.SoftLimit <= 0 || m.SoftLimit == math.MaxInt64:
		after = c.max // no soft limit: nothing to keep away from
	case float64(m.InUse) >= pressureHigh*float64(m.SoftLimit):
		if after /= 2; after < pressureFloor {
			after = 0
		}
	case float64(m.InUse) < pressureLow*float64(m.SoftLimit):
		after = min(c.max, max(2*before, pressureFloor))
	}
	if after == before {
		c.mu.Unlock()
		return before, after
	}
	c.limit.Store(int64(after))
	if after < before {
		c.stats.Shrinks++
		for c.bytes > after && c.order.Len() > 0 {
			c.evictOldestLocked()
		}
	}
	c.mu.Unlock()
	if after < before {
		c.recycle.trim()
	}
	return before, after
}
