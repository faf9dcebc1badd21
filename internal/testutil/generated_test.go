package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGeneratedSectionCheck(t *testing.T) {
	const current = "intro\n<!-- BEGIN -->\n| table |\n<!-- END -->\noutro\n"
	for _, tt := range []struct {
		name    string
		doc     string
		update  bool
		wantErr string // "" for success
		wantDoc string // the document afterwards
	}{
		{name: "current", doc: current, wantDoc: current},
		{name: "stale", doc: "intro\n<!-- BEGIN -->\n| old |\n<!-- END -->\noutro\n", wantErr: "is stale: run `go generate ./x`",
			wantDoc: "intro\n<!-- BEGIN -->\n| old |\n<!-- END -->\noutro\n"},
		{name: "stale, updated", doc: "intro\n<!-- BEGIN -->\n| old |\n<!-- END -->\noutro\n", update: true, wantDoc: current},
		{name: "no markers", doc: "intro\n", wantErr: "not found", wantDoc: "intro\n"},
		{name: "end before begin", doc: "<!-- END -->\n<!-- BEGIN -->\n", update: true, wantErr: "not found",
			wantDoc: "<!-- END -->\n<!-- BEGIN -->\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "DOC.md")
			if err := os.WriteFile(path, []byte(tt.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			s := GeneratedSection{Path: path, Begin: "<!-- BEGIN -->", End: "<!-- END -->", Body: "| table |\n", Regenerate: "go generate ./x"}
			err := s.check(tt.update)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("check: %v, want error %q", err, tt.wantErr)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.wantDoc {
				t.Errorf("document afterwards:\n%s\nwant:\n%s", got, tt.wantDoc)
			}
		})
	}
}
