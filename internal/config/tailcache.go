package config

import (
	"fmt"

	"github.com/iggygw/iggy-gateway-kafka/internal/hostmem"
)

// Bounds of the tail cache's automatic size. A consumer catching up on what was written
// within the cache's reach reads at a Kafka broker's rate; beyond it, at the rate of Iggy
// polls (docs/PERFORMANCE.md). A Kafka broker serves such reads from the page cache, which
// takes whatever memory is free; the gateway takes a quarter of what it may use, as a JVM
// sizes its default heap, within these bounds, and no more than the request memory: an
// operator who lowered MAX_REQUEST_MEMORY wants a small process.
const (
	tailCacheAutoShare = 4
	tailCacheAutoMin   = 64 << 20
	tailCacheAutoMax   = 1 << 30
	// tailCacheUnknown is used when the memory available cannot be read.
	tailCacheUnknown = 128 << 20
)

// readMemory finds the memory available to the process; tests replace it.
var readMemory = hostmem.Read

// TailCacheAuto is the tail cache size for a process that may use l with requestMemory of
// MAX_REQUEST_MEMORY: a quarter of l between 64 MiB and 1 GiB (128 MiB when l is unknown),
// and no more than requestMemory.
func TailCacheAuto(l hostmem.Limit, requestMemory int) int {
	size := tailCacheUnknown
	if l.Bytes > 0 {
		size = int(min(max(l.Bytes/tailCacheAutoShare, tailCacheAutoMin), tailCacheAutoMax))
	}
	return min(size, requestMemory)
}

func tailCacheSetting() *setting {
	s := sizeSettingFrom("TAIL_CACHE_BYTES", 0, 0, "memory for the record batches this gateway wrote most recently, served to consumers at the tail of a partition, or catching up within its reach, as the producers sent them (compression kept) without reading Iggy; 0: off; auto: a quarter of the memory the process may use (its cgroup limit, else the machine's RAM), between 64MiB and 1GiB, and no more than MAX_REQUEST_MEMORY (docs/PERFORMANCE.md)",
		func(c *Config) *int { return &c.TailCacheBytes })
	s.def = "auto"
	s.form = `"auto" or ` + s.form
	bytes := s.set
	s.set = func(c *Config, v string) error {
		c.tailCacheAuto = v == "auto"
		if c.tailCacheAuto {
			return nil // sized by sizeTailCache once every setting is known
		}
		return bytes(c, v)
	}
	return s
}

// sizeTailCache sizes an automatic tail cache and says from what (TailCacheSizedFrom).
func (c *Config) sizeTailCache() {
	c.TailCacheSizedFrom = ""
	if !c.tailCacheAuto {
		return
	}
	l := readMemory()
	c.TailCacheBytes = TailCacheAuto(l, c.Limits.MaxRequestMemory)
	from := "the memory available is unknown"
	if l.Bytes > 0 {
		from = fmt.Sprintf("a quarter of %.1f GiB (%s), between %s and %s", float64(l.Bytes)/(1<<30), l.Source,
			formatSize(tailCacheAutoMin), formatSize(tailCacheAutoMax))
	}
	if c.TailCacheBytes == c.Limits.MaxRequestMemory {
		from += fmt.Sprintf(", at most %sMAX_REQUEST_MEMORY (%s)", EnvPrefix, formatSize(c.Limits.MaxRequestMemory))
	}
	c.TailCacheSizedFrom = from
}
