package config

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

//go:generate go test -run TestReferenceDocIsCurrent -update .

var update = flag.Bool("update", false, "rewrite docs/CONFIGURATION.md from the settings")

// docs/CONFIGURATION.md carries the settings table generated from the code; a stale doc fails
// here. Regenerate with `go generate ./internal/config`.
func TestReferenceDocIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "CONFIGURATION.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceReference(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(doc) != want {
		t.Fatalf("%s is stale: run `go generate ./internal/config`", path)
	}
}
