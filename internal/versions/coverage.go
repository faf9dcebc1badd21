package versions

import (
	"fmt"
	"strings"
)

// Coverage markers delimit the generated table inside docs/PROTOCOL-COVERAGE.md.
const (
	CoverageBegin = "<!-- BEGIN GENERATED: internal/versions, do not edit by hand -->"
	CoverageEnd   = "<!-- END GENERATED -->"
)

// CoverageMarkdown renders the table as the Markdown that docs/PROTOCOL-COVERAGE.md carries
// between CoverageBegin and CoverageEnd.
func CoverageMarkdown() string {
	var b strings.Builder
	b.WriteString("| Key | API | Accepted | Advertised | Notes |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for _, a := range table {
		adv := versionRange(a.advertisedMin(), a.Max)
		if a.SASLOnly {
			adv += " (SASL listeners only)"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", a.Key, a.Name, versionRange(a.Min, a.Max), adv, a.Note)
	}
	return b.String()
}

func versionRange(lo, hi int16) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}
