// Package buildinfo says which build of a command is running: its version, the commit it was
// built from and the Go version, for --version and for the container image labels to agree.
//
// The Go toolchain records the commit (vcs.revision) when it builds inside a git checkout.
// Builds without git metadata, such as a container build stage, pass both values with the
// linker instead:
//
//	go build -ldflags "-X github.com/iggygw/iggy-gateway-kafka/internal/buildinfo.version=v1.2.3 \
//	  -X github.com/iggygw/iggy-gateway-kafka/internal/buildinfo.commit=$(git rev-parse HEAD)"
package buildinfo

import (
	"fmt"
	"runtime/debug"
)

// Set with -ldflags -X (see the package comment); empty means "take it from the build info".
var (
	version string
	commit  string
)

// Unknown stands for a value the build did not record.
const Unknown = "unknown"

// Info describes one build.
type Info struct {
	Version   string // -X version, else the module version, else "devel"
	Commit    string // -X commit, else vcs.revision (with "-dirty" for uncommitted changes), else Unknown
	GoVersion string // the toolchain that built the binary
}

// Read returns the running binary's build information.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(bi, version, commit)
}

// String is the --version line, for example
// "iggy-gateway-kafka v1.2.3 (commit 1d87240505630e656d2bc437cacb1d029ffb2264, go1.26.8)".
func (i Info) String(program string) string {
	return fmt.Sprintf("%s %s (commit %s, %s)", program, i.Version, i.Commit, i.GoVersion)
}

// resolve prefers the linker-set values over what the toolchain recorded; bi is nil when the
// binary carries no build information.
func resolve(bi *debug.BuildInfo, ldVersion, ldCommit string) Info {
	info := Info{Version: ldVersion, Commit: ldCommit, GoVersion: Unknown}
	if bi != nil {
		info.GoVersion = bi.GoVersion
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		if info.Commit == "" {
			info.Commit = vcsCommit(bi.Settings)
		}
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	if info.Commit == "" {
		info.Commit = Unknown
	}
	return info
}

func vcsCommit(settings []debug.BuildSetting) string {
	var rev string
	var dirty bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}
