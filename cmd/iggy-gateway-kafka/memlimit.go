package main

import (
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/iggygw/iggy-gateway-kafka/internal/hostmem"
)

// memoryLimitShare is the part of a container's memory limit given to the Go runtime as its
// soft limit; the rest covers what the runtime does not count (thread stacks, the binary).
const memoryLimitShare = 0.9

// memoryBaseline is what the process holds beside the request memory and the tail cache:
// the Go runtime, goroutine stacks, buffer pools, Iggy connection buffers, group, producer
// and partition state. The soft limit is request memory + tail cache + this; the ceiling
// docs/LIMITS.md promises for the resident size is 64 MiB more, for what the runtime does not
// count (the binary's pages, memory freed but not yet returned).
const memoryBaseline = 192 << 20

// softMemoryLimit is the runtime's soft memory limit, and what it was derived from, for a
// process with requestMemory of MAX_REQUEST_MEMORY and tailCache bytes of tail cache that may
// use l, unless the environment sets one (GOMEMLIMIT wins). The collector lets the heap grow
// to twice what is live (GOGC=100): without a soft limit, a full request budget and tail
// cache could take the process to twice its settings, into an OOM kill (issue 25 measured
// 7 GiB for a 1 GiB budget). Near the soft limit the collector runs more often instead. The
// limit is derived from the settings whether or not a cgroup limit exists, and is the lower
// of that and 90% of a cgroup limit; the machine's RAM is no limit of its own.
func softMemoryLimit(environ []string, l hostmem.Limit, requestMemory, tailCache int) (limit int64, from string, ok bool) {
	for _, kv := range environ {
		if strings.HasPrefix(kv, "GOMEMLIMIT=") {
			return 0, "", false
		}
	}
	limit = int64(requestMemory) + int64(tailCache) + memoryBaseline
	from = "settings: MAX_REQUEST_MEMORY + TAIL_CACHE_BYTES + 192MiB baseline"
	if l.Source == hostmem.SourceCgroupV2 || l.Source == hostmem.SourceCgroupV1 {
		if c := int64(float64(l.Bytes) * memoryLimitShare); c < limit {
			limit, from = c, "90% of the cgroup limit ("+string(l.Source)+")"
		}
	}
	return limit, from, true
}

// limitMemory sets the runtime's soft memory limit (softMemoryLimit) and logs it and how the
// memory-derived defaults were sized.
func limitMemory(environ []string, requestMemory, tailCacheBytes int, tailCacheFrom string, log *slog.Logger) {
	l := hostmem.Read()
	if limit, from, ok := softMemoryLimit(environ, l, requestMemory, tailCacheBytes); ok {
		debug.SetMemoryLimit(limit)
		log.Info("Go runtime memory limit set", "limit_bytes", limit, "from", from, "memory_available_bytes", l.Bytes, "memory_source", string(l.Source))
	} else {
		log.Info("Go runtime memory limit from GOMEMLIMIT", "limit_bytes", debug.SetMemoryLimit(-1))
	}
	if tailCacheFrom != "" {
		log.Info("tail cache sized from memory", "bytes", tailCacheBytes, "from", tailCacheFrom)
	}
}
