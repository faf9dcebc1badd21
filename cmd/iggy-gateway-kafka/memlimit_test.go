package main

import (
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/hostmem"
)

func TestSoftMemoryLimit(t *testing.T) {
	const (
		request      = 1 << 30
		tail         = 256 << 20
		fromSettings = request + tail + memoryBaseline // 1.44 GiB
	)
	tests := []struct {
		name    string
		environ []string
		limit   hostmem.Limit
		want    int64
		set     bool
	}{
		{"a small cgroup v2 limit", nil, hostmem.Limit{Bytes: 1 << 30, Source: hostmem.SourceCgroupV2}, 966367641, true},
		{"a small cgroup v1 limit", nil, hostmem.Limit{Bytes: 1 << 30, Source: hostmem.SourceCgroupV1}, 966367641, true},
		{"a large cgroup limit: the settings", nil, hostmem.Limit{Bytes: 8 << 30, Source: hostmem.SourceCgroupV2}, fromSettings, true},
		{"GOMEMLIMIT wins", []string{"GOGC=50", "GOMEMLIMIT=512MiB"}, hostmem.Limit{Bytes: 1 << 30, Source: hostmem.SourceCgroupV2}, 0, false},
		{"no cgroup: the settings, not the machine's RAM", nil, hostmem.Limit{Bytes: 24 << 30, Source: hostmem.SourceMemTotal}, fromSettings, true},
		{"unknown: the settings", nil, hostmem.Limit{Source: hostmem.SourceUnknown}, fromSettings, true},
	}
	for _, tt := range tests {
		got, from, set := softMemoryLimit(tt.environ, tt.limit, request, tail)
		if got != tt.want || set != tt.set {
			t.Errorf("%s: softMemoryLimit = %d, %v; want %d, %v", tt.name, got, set, tt.want, tt.set)
		}
		if set && from == "" {
			t.Errorf("%s: no origin given for the limit", tt.name)
		}
	}
}
