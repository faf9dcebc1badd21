package config

import (
	"fmt"
	"strings"
)

// Reference markers delimit the generated settings table inside docs/CONFIGURATION.md.
const (
	ReferenceBegin = "<!-- BEGIN GENERATED: internal/config, do not edit by hand -->"
	ReferenceEnd   = "<!-- END GENERATED -->"
)

// ReferenceMarkdown renders every setting as a Markdown table.
func ReferenceMarkdown() string {
	var b strings.Builder
	b.WriteString("| Variable | Flag | Default | Accepted | Meaning |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for _, s := range settings {
		def := "`" + s.def + "`"
		switch {
		case s.secret:
			def = "required with the bridge"
		case s.def == "":
			def = "unset"
		}
		fmt.Fprintf(&b, "| `%s` | `--%s` | %s | %s | %s |\n", s.env(), s.flag(), def,
			strings.ReplaceAll(s.form, "|", "\\|"), strings.ReplaceAll(s.usage, "|", "\\|"))
	}
	return b.String()
}

// ReplaceReference returns doc with the text between the markers replaced by the current
// settings table.
func ReplaceReference(doc string) (string, error) {
	i := strings.Index(doc, ReferenceBegin)
	j := strings.Index(doc, ReferenceEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("reference markers %q ... %q not found", ReferenceBegin, ReferenceEnd)
	}
	return doc[:i+len(ReferenceBegin)] + "\n" + ReferenceMarkdown() + doc[j:], nil
}
