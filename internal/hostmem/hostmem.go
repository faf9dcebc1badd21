// Package hostmem finds how much memory the gateway's process may use: the memory limit of
// its control group (a container's limit, cgroup v2 or v1) where one is set, else the
// machine's RAM. Defaults that scale with memory (the tail cache) are derived from it, as a
// JVM derives its default heap.
package hostmem

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// Source tells where a Limit came from.
type Source string

const (
	SourceCgroupV2 Source = "cgroup v2 memory.max"
	SourceCgroupV1 Source = "cgroup v1 memory.limit_in_bytes"
	SourceMemTotal Source = "MemTotal of /proc/meminfo"
	SourceUnknown  Source = "unknown"
)

// Limit is the memory available to the process in bytes; 0 with SourceUnknown when nothing
// could be read (not Linux, or /proc and /sys not mounted).
type Limit struct {
	Bytes  int64
	Source Source
}

// Read reads the limit of the running process from the root file system.
func Read() Limit { return ReadFS(os.DirFS("/")) }

// ReadFS reads the limit from a file system laid out as Linux's root ("proc/self/cgroup",
// "sys/fs/cgroup/...", "proc/meminfo"). The smallest of the cgroup limit and the RAM wins: a
// limit above the RAM is no limit.
func ReadFS(root fs.FS) Limit {
	best := Limit{Source: SourceUnknown}
	consider := func(n int64, src Source) {
		if n > 0 && (best.Bytes == 0 || n < best.Bytes) {
			best = Limit{Bytes: n, Source: src}
		}
	}
	consider(memTotal(root), SourceMemTotal)
	v2, v1 := cgroupPaths(root)
	if v2 != "" {
		consider(smallestUpward(root, "sys/fs/cgroup", v2, "memory.max"), SourceCgroupV2)
	}
	if v1 != "" {
		consider(smallestUpward(root, "sys/fs/cgroup/memory", v1, "memory.limit_in_bytes"), SourceCgroupV1)
	}
	return best
}

// cgroupPaths returns the process's cgroup v2 path ("0::/path") and its v1 memory
// controller's path ("N:...memory...:/path") from /proc/self/cgroup.
func cgroupPaths(root fs.FS) (v2, v1 string) {
	b, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return "", ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		id, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		controllers, p, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		switch {
		case id == "0" && controllers == "":
			v2 = p
		case containsController(controllers, "memory"):
			v1 = p
		}
	}
	return v2, v1
}

func containsController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// smallestUpward reads file in the cgroup directory at p below mount and in each of its
// ancestors (a parent's limit binds its children), and returns the smallest limit set; 0
// when none is. Inside a container the cgroup's own directory is usually mounted as the
// root, so the path as /proc/self/cgroup names it may not exist: the mount's root counts too.
func smallestUpward(root fs.FS, mount, p, file string) int64 {
	var least int64
	for dir := path.Clean("/" + p); ; dir = path.Dir(dir) {
		if n := readLimit(root, path.Join(mount, dir, file)); n > 0 && (least == 0 || n < least) {
			least = n
		}
		if dir == "/" {
			return least
		}
	}
}

// unlimited is where cgroup v1 reports "no limit" (the largest page-aligned int64); anything
// this large is no limit in practice either.
const unlimited = 1 << 62

// readLimit reads a cgroup limit file: a byte count, or "max" (v2) for none.
func readLimit(root fs.FS, name string) int64 {
	b, err := fs.ReadFile(root, name)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= unlimited {
		return 0
	}
	return n
}

// memTotal reads MemTotal (kB) from /proc/meminfo.
func memTotal(root fs.FS) int64 {
	b, err := fs.ReadFile(root, "proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil || kb <= 0 {
			return 0
		}
		return kb << 10
	}
	return 0
}
