package hostmem

import (
	"testing"
	"testing/fstest"
)

const meminfo24G = "MemTotal:       24683652 kB\nMemFree:         1000 kB\n"

func TestReadFS(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  Limit
	}{
		{"nothing readable", nil, Limit{Source: SourceUnknown}},
		{"RAM only", map[string]string{"proc/meminfo": meminfo24G}, Limit{24683652 << 10, SourceMemTotal}},
		{"cgroup v2 container: own directory mounted as the root", map[string]string{
			"proc/meminfo":             meminfo24G,
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "2147483648\n",
		}, Limit{2 << 30, SourceCgroupV2}},
		{"cgroup v2 host path, limit on a parent slice", map[string]string{
			"proc/meminfo":                                     meminfo24G,
			"proc/self/cgroup":                                 "0::/system.slice/gw.service\n",
			"sys/fs/cgroup/system.slice/memory.max":            "1073741824\n",
			"sys/fs/cgroup/system.slice/gw.service/memory.max": "max\n",
		}, Limit{1 << 30, SourceCgroupV2}},
		{"cgroup v2 without a limit", map[string]string{
			"proc/meminfo":             meminfo24G,
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "max\n",
		}, Limit{24683652 << 10, SourceMemTotal}},
		{"cgroup v1 memory controller with a limit", map[string]string{
			"proc/meminfo":     meminfo24G,
			"proc/self/cgroup": "5:cpu,cpuacct:/\n4:memory:/docker/abc\n0::/\n",
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "536870912\n",
		}, Limit{512 << 20, SourceCgroupV1}},
		{"cgroup v1 unlimited (page-aligned max int64)", map[string]string{
			"proc/meminfo":     meminfo24G,
			"proc/self/cgroup": "4:memory:/process_api/x\n",
			"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": "9223372036854771712\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":               "9223372036854771712\n",
		}, Limit{24683652 << 10, SourceMemTotal}},
		{"a limit above the RAM is no limit", map[string]string{
			"proc/meminfo":             "MemTotal: 1048576 kB\n",
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "4294967296\n",
		}, Limit{1 << 30, SourceMemTotal}},
		{"garbage is ignored", map[string]string{
			"proc/meminfo":             "MemTotal: lots\n",
			"proc/self/cgroup":         "nonsense\n0::/\n",
			"sys/fs/cgroup/memory.max": "-5\n",
		}, Limit{Source: SourceUnknown}},
	}
	for _, tt := range tests {
		root := fstest.MapFS{}
		for name, data := range tt.files {
			root[name] = &fstest.MapFile{Data: []byte(data)}
		}
		if got := ReadFS(root); got != tt.want {
			t.Errorf("%s: ReadFS = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// The running process gets some answer on Linux; where it comes from depends on the machine.
func TestReadThisMachine(t *testing.T) {
	l := Read()
	if l.Bytes < 0 || (l.Bytes == 0) != (l.Source == SourceUnknown) {
		t.Fatalf("Read() = %+v", l)
	}
	t.Logf("memory available to this process: %d bytes (%s)", l.Bytes, l.Source)
}
