package e2e

import (
	"fmt"
	"slices"
	"strings"
)

// Report cell values.
const (
	ReportPass       = "pass"
	ReportFail       = "FAIL"
	ReportPending    = "pending"
	ReportNotRun     = "not run"
	ReportNotCovered = "not tested"
)

// clientLimits are report cells a client cannot exercise at all, with why.
var clientLimits = map[string]map[Cell]string{
	"kafkajs":  {CellLZ4: "n/a (no codec in kafkajs)", CellZstd: "n/a (no codec in kafkajs)"},
	"kafka-go": {CellIdempotence: "n/a (no idempotent producer)"},
}

// familyOrder is the row order of the report.
var familyOrder = []string{"java", "kcat", "python", "kafka-python", "franz-go", "sarama", "kafka-go", "kafkajs"}

// frameworkOrder is the row order of the frameworks table: applications built on Kafka
// clients (Kafka Streams, Connect, ...), reported per scenario rather than per cell.
var frameworkOrder = []string{"kafka-streams", "kafka-connect", "mirrormaker2", "quixstreams", "aiokafka"}

// cellValue summarises the scenarios covering one cell of one client: FAIL if any failed, pass
// if any passed, pending if any is pending, else not run.
func cellValue(rs []Result) string {
	has := func(status string) bool {
		return slices.ContainsFunc(rs, func(r Result) bool { return r.Status == status })
	}
	switch {
	case len(rs) == 0:
		return ReportNotCovered
	case has(StatusFail):
		return ReportFail
	case has(StatusPass):
		return ReportPass
	case has(StatusPending):
		return ReportPending
	default:
		return ReportNotRun
	}
}

// ReportTable returns family → cell → value for the results.
func ReportTable(rs []Result) map[string]map[Cell]string {
	table := map[string]map[Cell]string{}
	for _, fam := range familyOrder {
		row := map[Cell]string{}
		for _, c := range Cells {
			var covering []Result
			for _, r := range rs {
				if r.Family == fam && r.Backend == "" && slices.Contains(r.Covers, c) {
					covering = append(covering, r)
				}
			}
			row[c] = cellValue(covering)
			if why, ok := clientLimits[fam][c]; ok && row[c] == ReportNotCovered {
				row[c] = why
			}
		}
		table[fam] = row
	}
	return table
}

// RenderCompatibility renders docs/COMPATIBILITY.md from the results of a full run.
func RenderCompatibility(rs []Result) string {
	var b strings.Builder
	b.WriteString(`# Compatibility report card

Generated from the end-to-end suite (` + "`internal/e2e`" + `) by
` + "`go -C internal/e2e run ./cmd/compat-report -results FILE -write ../../docs/COMPATIBILITY.md`" + `, where FILE is
the ` + "`IGGYGW_E2E_RESULTS`" + ` output of ` + "`make test`" + ` (` + "`.ci/run`" + ` prints the same table for every CI run and
fails if this file claims a pass the run did not show). Do not edit by hand.

Each cell is what real clients, installed at the versions below, did through the gateway
(in-memory Iggy backend): **pass** = every check of at least one scenario passed and none
failed, **FAIL** = a scenario failed, **pending** = the scenarios exist but are gated by
` + "`pendingFeatures`" + ` in ` + "`internal/e2e/features.go`" + ` (a gateway feature not landed yet, or a known
gateway bug; the reason is in the scenario list below), **not tested** = no scenario yet. Scenarios assert the data that comes back (keys, values, headers, timestamps,
offsets), not exit codes. "idempotence" means the client's idempotent producer works against the
gateway (InitProducerId and sequenced batches accepted). With ` + "`IGGY_KAFKA_IDEMPOTENT_PRODUCERS`" + `
(the default) the gateway also deduplicates retried batches per partition as Kafka does, so an
idempotent producer's records are stored once and in order, across dropped Iggy connections and
gateway restarts (docs/IDEMPOTENCE.md; the fault scenarios assert it for franz-go, Java and
librdkafka). Producers without idempotence stay at-least-once.

`)
	table := ReportTable(rs)
	versions := map[string]string{}
	for _, r := range rs {
		if r.Version != "" {
			versions[r.Family] = r.Version
		}
	}
	b.WriteString("| client | version |")
	for _, c := range Cells {
		b.WriteString(" " + string(c) + " |")
	}
	b.WriteString("\n| --- | --- |" + strings.Repeat(" --- |", len(Cells)) + "\n")
	for _, fam := range familyOrder {
		v := versions[fam]
		if v == "" {
			v = "(not installed)"
		}
		fmt.Fprintf(&b, "| %s | %s |", fam, v)
		for _, c := range Cells {
			b.WriteString(" " + table[fam][c] + " |")
		}
		b.WriteString("\n")
	}
	renderFrameworks(&b, rs, versions)
	renderCluster(&b, rs)
	b.WriteString("\n## Scenarios\n\n| client | scenario | covers | outcome |\n| --- | --- | --- | --- |\n")
	for _, fam := range familyOrder {
		for _, r := range rs {
			if r.Family != fam || r.Backend != "" {
				continue
			}
			var covers []string
			for _, c := range r.Covers {
				covers = append(covers, string(c))
			}
			outcome := r.Status
			if r.Reason != "" {
				outcome += ": " + r.Reason
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", fam, r.Scenario, strings.Join(covers, ", "), outcome)
		}
	}
	return b.String()
}

// renderFrameworks writes the frameworks table: one row per framework scenario, and "not
// tested" for a framework without one.
func renderFrameworks(b *strings.Builder, rs []Result, versions map[string]string) {
	b.WriteString("\n## Frameworks\n\nReal applications run on the gateway (the scenarios say what each checks).\n\n" +
		"| framework | version | scenario | outcome |\n| --- | --- | --- | --- |\n")
	for _, fam := range frameworkOrder {
		v := versions[fam]
		if v == "" {
			v = "(not installed)"
		}
		ran := false
		for _, r := range rs {
			if r.Family != fam {
				continue
			}
			ran = true
			outcome := r.Status
			if r.Reason != "" {
				outcome += ": " + r.Reason
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", fam, v, r.Scenario, outcome)
		}
		if !ran {
			fmt.Fprintf(b, "| %s | %s | — | %s |\n", fam, v, ReportNotCovered)
		}
	}
}

// clusterHeader is the header row of the Iggy cluster table.
const clusterHeader = "| client | Iggy cluster | scenario | outcome |"

// renderCluster writes the Iggy cluster table: the scenarios run through a gateway given the
// nodes of a 3-node Iggy cluster (internal/e2e/iggycluster_test.go), one row each.
func renderCluster(b *strings.Builder, rs []Result) {
	b.WriteString("\n## Behind an Iggy cluster\n\n" +
		"One gateway given the three nodes of an Iggy cluster, a backup listed first " +
		"([DEPLOYMENT.md §7](DEPLOYMENT.md#7-an-iggy-cluster)): each client runs scenarios of its own " +
		"table above through it, and the Java idempotent producer (acks=all) writes while an Iggy node " +
		"is killed (`failover-*`: every record delivered, stored once, in order; the same gateway then " +
		"creates a topic with replication factor 3 and round-trips a record). The in-memory cluster " +
		"shares one state between its nodes ([DEPLOYMENT.md §8](DEPLOYMENT.md#8-in-memory-iggy-cluster) " +
		"lists how it differs from a real one), so these rows test the gateway's side of a failover, " +
		"not Iggy's replication.\n\n" + clusterHeader + "\n| --- | --- | --- | --- |\n")
	ran := false
	for _, fam := range familyOrder {
		for _, r := range rs {
			if r.Family != fam || r.Backend == "" {
				continue
			}
			ran = true
			outcome := r.Status
			if r.Reason != "" {
				outcome += ": " + r.Reason
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", fam, r.Backend, r.Scenario, outcome)
		}
	}
	if !ran {
		fmt.Fprintf(b, "| — | — | — | %s |\n", ReportNotCovered)
	}
}

// parseClusterRows reads the Iggy cluster table back from a rendered report: client, cluster
// and scenario → outcome.
func parseClusterRows(doc string) map[[3]string]string {
	rows := map[[3]string]string{}
	in := false
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case line == clusterHeader:
			in = true
		case !strings.HasPrefix(line, "| "):
			in = false
		case in && !strings.HasPrefix(line, "| ---"):
			f := strings.Split(strings.Trim(line, "|"), "|")
			if len(f) == 4 {
				for i := range f {
					f[i] = strings.TrimSpace(f[i])
				}
				rows[[3]string{f[0], f[1], f[2]}] = f[3]
			}
		}
	}
	return rows
}

// ParseReportTable reads the client × cell table back from a rendered report, to check a
// committed report against a run.
func ParseReportTable(doc string) map[string]map[Cell]string {
	table := map[string]map[Cell]string{}
	var header []string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| ") {
			header = nil
			continue
		}
		fields := strings.Split(strings.Trim(line, "|"), "|")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		switch {
		case header == nil && len(fields) > 2 && fields[0] == "client" && fields[1] == "version":
			header = fields
		case header != nil && fields[0] != "---" && len(fields) == len(header):
			row := map[Cell]string{}
			for i := 2; i < len(fields); i++ {
				row[Cell(header[i])] = fields[i]
			}
			table[fields[0]] = row
		}
	}
	return table
}

// UnprovenClaims lists the cells where doc says pass but the run did not pass.
func UnprovenClaims(doc string, rs []Result) []string {
	run := ReportTable(rs)
	var out []string
	for fam, row := range ParseReportTable(doc) {
		for c, v := range row {
			if v == ReportPass && run[fam][c] != ReportPass {
				out = append(out, fmt.Sprintf("%s / %s: the report says pass, this run says %s", fam, c, run[fam][c]))
			}
		}
	}
	for key, v := range parseClusterRows(doc) {
		if v != ReportPass {
			continue
		}
		if !slices.ContainsFunc(rs, func(r Result) bool {
			return r.Family == key[0] && r.Backend == key[1] && r.Scenario == key[2] && r.Status == StatusPass
		}) {
			out = append(out, fmt.Sprintf("%s / %s: the report says pass behind the %s, this run does not", key[0], key[2], key[1]))
		}
	}
	slices.Sort(out)
	return out
}
