package e2e

import (
	"slices"
	"strings"
	"testing"
)

func TestCellValue(t *testing.T) {
	r := func(status string) Result { return Result{Status: status} }
	for _, c := range []struct {
		rs   []Result
		want string
	}{
		{nil, ReportNotCovered},
		{[]Result{r(StatusPass), r(StatusPending)}, ReportPass},
		{[]Result{r(StatusPass), r(StatusFail)}, ReportFail},
		{[]Result{r(StatusPending), r(StatusSkip)}, ReportPending},
		{[]Result{r(StatusSkip)}, ReportNotRun},
	} {
		if got := cellValue(c.rs); got != c.want {
			t.Errorf("cellValue(%v) = %q, want %q", c.rs, got, c.want)
		}
	}
}

func TestReportRoundTripAndClaims(t *testing.T) {
	rs := []Result{
		{Family: "kcat", Version: "kcat 1.7.1", Scenario: "metadata", Covers: []Cell{CellMetadata}, Status: StatusPass},
		{Family: "kcat", Version: "kcat 1.7.1", Scenario: "produce-consume-gzip", Covers: []Cell{CellGzip}, Status: StatusPending, Reason: "gzip produce not implemented yet"},
		{Family: "kafkajs", Version: "kafkajs 2.2.4", Scenario: "metadata", Covers: []Cell{CellMetadata}, Status: StatusFail},
	}
	doc := RenderCompatibility(rs)
	table := ParseReportTable(doc)
	if table["kcat"][CellMetadata] != ReportPass || table["kcat"][CellGzip] != ReportPending || table["kafkajs"][CellMetadata] != ReportFail {
		t.Errorf("parsed table %v", table)
	}
	if table["kafkajs"][CellLZ4] != clientLimits["kafkajs"][CellLZ4] || table["java"][CellMetadata] != ReportNotCovered {
		t.Errorf("limits and uncovered cells: %v / %v", table["kafkajs"], table["java"])
	}
	if claims := UnprovenClaims(doc, rs); len(claims) != 0 {
		t.Errorf("a report checked against its own run: %v", claims)
	}
	// The same report checked against a run where kcat metadata failed is a false claim.
	worse := slices.Clone(rs)
	worse[0].Status = StatusFail
	claims := UnprovenClaims(doc, worse)
	if len(claims) != 1 || !strings.Contains(claims[0], "kcat / metadata") {
		t.Errorf("claims %v, want kcat / metadata", claims)
	}
}

func TestReportFrameworks(t *testing.T) {
	rs := []Result{
		{Family: "kafka-streams", Version: "Apache Kafka Streams 4.4.0", Scenario: "word-count", Status: StatusPass},
		{Family: "java", Version: "x", Scenario: "metadata", Covers: []Cell{CellMetadata}, Status: StatusPass},
	}
	doc := RenderCompatibility(rs)
	for _, want := range []string{
		"| kafka-streams | Apache Kafka Streams 4.4.0 | word-count | pass |",
		"| kafka-connect | (not installed) | — | not tested |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("report lacks %q:\n%s", want, doc)
		}
	}
	if _, ok := ParseReportTable(doc)["kafka-streams"]; ok {
		t.Error("a framework row was read as a client row")
	}
}

// Results behind an Iggy cluster fill a table of their own, not the client cells, and a pass
// claimed there is checked against the run too.
func TestReportCluster(t *testing.T) {
	rs := []Result{
		{Family: "java", Version: "x", Scenario: "quickstart", Covers: []Cell{CellProduce}, Status: StatusPass},
		{Family: "kcat", Version: "y", Scenario: "produce-consume-none", Covers: []Cell{CellProduce}, Backend: "in-memory Iggy cluster", Status: StatusPass},
		{Family: "java", Version: "x", Scenario: "failover-primary-killed", Covers: []Cell{CellIdempotence}, Backend: "in-memory Iggy cluster", Status: StatusFail},
	}
	doc := RenderCompatibility(rs)
	for _, want := range []string{
		"| kcat | in-memory Iggy cluster | produce-consume-none | pass |",
		"| java | in-memory Iggy cluster | failover-primary-killed | fail |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("report lacks %q:\n%s", want, doc)
		}
	}
	table := ParseReportTable(doc)
	if table["kcat"][CellProduce] != ReportNotCovered || table["java"][CellIdempotence] != ReportNotCovered || table["java"][CellProduce] != ReportPass {
		t.Errorf("cluster results leaked into the client cells: %v / %v", table["kcat"], table["java"])
	}
	if strings.Contains(doc, "| java | failover-primary-killed |") {
		t.Error("a cluster result is listed among the single-server scenarios")
	}
	if claims := UnprovenClaims(doc, rs); len(claims) != 0 {
		t.Errorf("a report checked against its own run: %v", claims)
	}
	worse := slices.Clone(rs)
	worse[1].Status = StatusSkip
	if claims := UnprovenClaims(doc, worse); len(claims) != 1 || !strings.Contains(claims[0], "kcat / produce-consume-none") {
		t.Errorf("claims %v, want kcat / produce-consume-none behind the cluster", claims)
	}
}
