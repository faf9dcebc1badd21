package config

import (
	"strings"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/hostmem"
)

func TestTailCacheAuto(t *testing.T) {
	tests := []struct {
		name          string
		limit         hostmem.Limit
		requestMemory int
		want          int
	}{
		{"unknown memory keeps the fixed size", hostmem.Limit{Source: hostmem.SourceUnknown}, 1 << 30, 128 << 20},
		{"a quarter of a 2 GiB container", hostmem.Limit{Bytes: 2 << 30, Source: hostmem.SourceCgroupV2}, 1 << 30, 512 << 20},
		{"no less than 64 MiB in a small container", hostmem.Limit{Bytes: 128 << 20, Source: hostmem.SourceCgroupV1}, 1 << 30, 64 << 20},
		{"no more than 1 GiB on a large machine", hostmem.Limit{Bytes: 24 << 30, Source: hostmem.SourceMemTotal}, 1 << 30, 1 << 30},
		{"no more than the request memory", hostmem.Limit{Bytes: 24 << 30, Source: hostmem.SourceMemTotal}, 64 << 20, 64 << 20},
		{"no more than the request memory, below the least", hostmem.Limit{Bytes: 24 << 30, Source: hostmem.SourceMemTotal}, 16 << 20, 16 << 20},
	}
	for _, tt := range tests {
		if got := TailCacheAuto(tt.limit, tt.requestMemory); got != tt.want {
			t.Errorf("%s: TailCacheAuto(%+v, %d) = %d, want %d", tt.name, tt.limit, tt.requestMemory, got, tt.want)
		}
	}
}

func TestTailCacheSetting(t *testing.T) {
	defer func(r func() hostmem.Limit) { readMemory = r }(readMemory)
	readMemory = func() hostmem.Limit { return hostmem.Limit{Bytes: 1 << 30, Source: hostmem.SourceCgroupV2} }

	c, err := Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.TailCacheBytes != 256<<20 || !strings.Contains(c.TailCacheSizedFrom, "1.0 GiB (cgroup v2 memory.max)") {
		t.Errorf("default: %d bytes, sized from %q", c.TailCacheBytes, c.TailCacheSizedFrom)
	}
	for _, tt := range []struct {
		value string
		want  int
	}{{"0", 0}, {"16MiB", 16 << 20}, {"auto", 256 << 20}} {
		c, err := Load(nil, []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=" + tt.value})
		if err != nil {
			t.Fatalf("%s: %v", tt.value, err)
		}
		if c.TailCacheBytes != tt.want || (c.TailCacheSizedFrom == "") != (tt.value != "auto") {
			t.Errorf("%s: %d bytes, sized from %q", tt.value, c.TailCacheBytes, c.TailCacheSizedFrom)
		}
	}
	// The request memory bounds it, whichever order the settings come in.
	for _, env := range [][]string{
		{"IGGY_KAFKA_MAX_REQUEST_MEMORY=64MiB", "IGGY_KAFKA_TAIL_CACHE_BYTES=auto"},
		{"IGGY_KAFKA_TAIL_CACHE_BYTES=auto", "IGGY_KAFKA_MAX_REQUEST_MEMORY=64MiB"},
		{"IGGY_KAFKA_MAX_REQUEST_MEMORY=64MiB"},
	} {
		c, err := Load(nil, env)
		if err != nil {
			t.Fatal(err)
		}
		if c.TailCacheBytes != 64<<20 || !strings.Contains(c.TailCacheSizedFrom, "at most IGGY_KAFKA_MAX_REQUEST_MEMORY (64MiB)") {
			t.Errorf("%v: %d bytes, sized from %q", env, c.TailCacheBytes, c.TailCacheSizedFrom)
		}
	}
	if c, err := Load([]string{"--tail-cache-bytes", "16MiB"}, []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=auto"}); err != nil || c.TailCacheBytes != 16<<20 || c.TailCacheSizedFrom != "" {
		t.Errorf("a flag over the environment: %v", err)
	}
	if _, err := Load(nil, []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=lots"}); err == nil || !strings.Contains(err.Error(), `"auto" or a byte count`) {
		t.Errorf("a bad value: %v", err)
	}
}
