package config

import (
	"flag"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

//go:generate go test -run TestReferenceDocIsCurrent|TestListenersDocIsCurrent -update .

var update = flag.Bool("update", false, "rewrite docs/CONFIGURATION.md from the settings")

// docs/CONFIGURATION.md carries the settings table generated from the code; a stale doc fails
// here. Regenerate with `go generate ./internal/config`.
func TestReferenceDocIsCurrent(t *testing.T) {
	testutil.GeneratedSection{
		Path:       "../../docs/CONFIGURATION.md",
		Begin:      ReferenceBegin,
		End:        ReferenceEnd,
		Body:       ReferenceMarkdown(),
		Regenerate: "go generate ./internal/config",
	}.Check(t, *update)
}

// The LISTENERS paragraph names the protocols from the code: it once said only PLAINTEXT was
// supported while all four were served.
func TestListenersDocIsCurrent(t *testing.T) {
	testutil.GeneratedSection{
		Path:       "../../docs/CONFIGURATION.md",
		Begin:      ListenersBegin,
		End:        ListenersEnd,
		Body:       ListenersMarkdown(),
		Regenerate: "go generate ./internal/config",
	}.Check(t, *update)
}
