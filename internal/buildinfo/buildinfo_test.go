package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name                string
		bi                  *debug.BuildInfo
		ldVersion, ldCommit string
		want                Info
	}{
		{name: "no build info", want: Info{Version: "devel", Commit: Unknown, GoVersion: Unknown}},
		{
			name: "git checkout build",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("abc123", "false")},
			want: Info{Version: "devel", Commit: "abc123", GoVersion: "go1.26.8"},
		},
		{
			name: "uncommitted changes",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("abc123", "true")},
			want: Info{Version: "devel", Commit: "abc123-dirty", GoVersion: "go1.26.8"},
		},
		{
			name: "go install of a tagged module",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}},
			want: Info{Version: "v1.2.3", Commit: Unknown, GoVersion: "go1.26.8"},
		},
		{
			name:      "linker values win",
			bi:        &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: vcs("abc123", "true")},
			ldVersion: "v2.0.0", ldCommit: "def456",
			want: Info{Version: "v2.0.0", Commit: "def456", GoVersion: "go1.26.8"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolve(tt.bi, tt.ldVersion, tt.ldCommit); got != tt.want {
				t.Errorf("resolve = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadReportsTheRunningToolchain(t *testing.T) {
	info := Read()
	if info.GoVersion != runtime.Version() {
		t.Errorf("GoVersion = %q, want %q", info.GoVersion, runtime.Version())
	}
	line := info.String("prog")
	for _, part := range []string{"prog ", info.Version, "commit " + info.Commit, runtime.Version()} {
		if !strings.Contains(line, part) {
			t.Errorf("String = %q, missing %q", line, part)
		}
	}
}
