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

// softMemoryLimit is the runtime's soft memory limit for a process that may use l, unless
// the environment sets one (GOMEMLIMIT). Only a cgroup limit counts: the collector lets the
// heap grow to twice what is live (GOGC=100), and with the tail cache and request buffers
// live that can pass a container's limit and meet the OOM killer; near a soft limit the
// collector runs more often instead. The machine's RAM is no such limit.
func softMemoryLimit(environ []string, l hostmem.Limit) (int64, bool) {
	for _, kv := range environ {
		if strings.HasPrefix(kv, "GOMEMLIMIT=") {
			return 0, false
		}
	}
	if l.Source != hostmem.SourceCgroupV2 && l.Source != hostmem.SourceCgroupV1 {
		return 0, false
	}
	return int64(float64(l.Bytes) * memoryLimitShare), true
}

// limitMemory sets the runtime's soft memory limit (softMemoryLimit) and logs how the
// memory-derived defaults were sized.
func limitMemory(environ []string, tailCacheBytes int, tailCacheFrom string, log *slog.Logger) {
	l := hostmem.Read()
	if limit, ok := softMemoryLimit(environ, l); ok {
		debug.SetMemoryLimit(limit)
		log.Info("Go runtime memory limit set from the cgroup's", "limit_bytes", limit, "cgroup_limit_bytes", l.Bytes, "source", string(l.Source))
	}
	if tailCacheFrom != "" {
		log.Info("tail cache sized from memory", "bytes", tailCacheBytes, "from", tailCacheFrom)
	}
}
