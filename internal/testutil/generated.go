package testutil

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// GeneratedSection is a part of a committed document that is generated from the code: the
// text between two marker lines.
type GeneratedSection struct {
	Path       string // the document, relative to the test's package directory
	Begin, End string // the marker lines around the section
	Body       string // what the section must hold
	Regenerate string // the command that brings the document up to date, named when it is stale
}

// Check fails t when the document's section is not Body. With update it writes Body into the
// document instead (what Regenerate runs).
func (s GeneratedSection) Check(t testing.TB, update bool) {
	t.Helper()
	if err := s.check(update); err != nil {
		t.Fatal(err)
	}
}

func (s GeneratedSection) check(update bool) error {
	doc, err := os.ReadFile(s.Path)
	if err != nil {
		return err
	}
	want, err := s.splice(string(doc))
	if err != nil {
		return err
	}
	if update {
		return os.WriteFile(s.Path, []byte(want), 0o644)
	}
	if string(doc) != want {
		return fmt.Errorf("%s is stale: run `%s`", s.Path, s.Regenerate)
	}
	return nil
}

// splice returns doc with the text between the markers replaced by Body.
func (s GeneratedSection) splice(doc string) (string, error) {
	i := strings.Index(doc, s.Begin)
	j := strings.Index(doc, s.End)
	if i < 0 || j < i {
		return "", fmt.Errorf("%s: markers %q ... %q not found", s.Path, s.Begin, s.End)
	}
	return doc[:i+len(s.Begin)] + "\n" + s.Body + doc[j:], nil
}
