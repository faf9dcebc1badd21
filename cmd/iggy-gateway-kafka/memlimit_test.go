package main

import (
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/hostmem"
)

func TestSoftMemoryLimit(t *testing.T) {
	container := hostmem.Limit{Bytes: 1 << 30, Source: hostmem.SourceCgroupV2}
	tests := []struct {
		name    string
		environ []string
		limit   hostmem.Limit
		want    int64
		set     bool
	}{
		{"a cgroup v2 limit", nil, container, 966367641, true},
		{"a cgroup v1 limit", nil, hostmem.Limit{Bytes: 2 << 30, Source: hostmem.SourceCgroupV1}, 1932735283, true},
		{"GOMEMLIMIT wins", []string{"GOGC=50", "GOMEMLIMIT=512MiB"}, container, 0, false},
		{"the machine's RAM is no limit", nil, hostmem.Limit{Bytes: 24 << 30, Source: hostmem.SourceMemTotal}, 0, false},
		{"unknown", nil, hostmem.Limit{Source: hostmem.SourceUnknown}, 0, false},
	}
	for _, tt := range tests {
		if got, set := softMemoryLimit(tt.environ, tt.limit); got != tt.want || set != tt.set {
			t.Errorf("%s: softMemoryLimit = %d, %v; want %d, %v", tt.name, got, set, tt.want, tt.set)
		}
	}
}
