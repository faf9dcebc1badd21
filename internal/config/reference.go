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

// Markers of the generated LISTENERS paragraph in docs/CONFIGURATION.md.
const (
	ListenersBegin = "<!-- BEGIN GENERATED: internal/config listeners, do not edit by hand -->"
	ListenersEnd   = "<!-- END GENERATED: listeners -->"
)

// ListenersMarkdown describes the LISTENERS form with the protocols parseListeners accepts, so
// the page cannot claim fewer (or more) than are served.
func ListenersMarkdown() string {
	names := make([]string, len(SecurityProtocols))
	for i, p := range SecurityProtocols {
		names[i] = "`" + p + "`"
	}
	return "`LISTENERS` is the Kafka-style form, `NAME://host:port,...`, where `NAME` is the listener's\n" +
		"security protocol, one of " + strings.Join(names, ", ") + ", each at most once and in any\n" +
		"combination (all are served; [SECURITY.md](SECURITY.md#listener-types) says what each\n" +
		"guarantees). `ADVERTISED_LISTENERS` gives the address clients should use per listener name\n" +
		"(default: the `LISTENERS` address); Metadata answers with the address of the listener the\n" +
		"client is connected to. `LISTENERS` cannot be combined with `BIND_ADDR`, `ADVERTISED_HOST`,\n" +
		"`ADVERTISED_PORT` or `SASL_ENABLED`.\n"
}
