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
