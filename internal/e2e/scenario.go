package e2e

import (
	"os"
	"testing"
	"time"
)

// Cell is a column of the compatibility report (docs/COMPATIBILITY.md): what a client was
// shown to do through the gateway.
type Cell string

// Report columns, in the order the report shows them.
const (
	CellMetadata    Cell = "metadata"
	CellProduce     Cell = "produce"
	CellGzip        Cell = "gzip"
	CellSnappy      Cell = "snappy"
	CellLZ4         Cell = "lz4"
	CellZstd        Cell = "zstd"
	CellConsume     Cell = "consume"
	CellGroups      Cell = "groups"
	CellStatic      Cell = "static membership"
	CellOffsets     Cell = "offsets"
	CellAdminTopics Cell = "admin topics"
	CellConfigs     Cell = "configs"
	CellIdempotence Cell = "idempotence"
	CellSASL        Cell = "SASL"
	CellTLS         Cell = "TLS"
)

// Cells lists the report columns in order.
var Cells = []Cell{CellMetadata, CellProduce, CellGzip, CellSnappy, CellLZ4, CellZstd, CellConsume,
	CellGroups, CellStatic, CellOffsets, CellAdminTopics, CellConfigs, CellIdempotence, CellSASL, CellTLS}

// Scenario is one end-to-end check of one client.
type Scenario struct {
	Name string
	// Needs are the gateway features the scenario exercises; it is skipped while one of them
	// is pending (features.go).
	Needs []Feature
	// Covers are the report cells a pass of this scenario proves for its client.
	Covers []Cell
	Run    func(t *testing.T, env *Env)
}

// Family is a client (or a set of tools sharing one client library) and how to find it.
type Family struct {
	Name string
	// Detect returns the client's version, or why it is not available on this machine.
	Detect func() (version string, missing string)
}

// required reports whether a missing client must fail the run (IGGYGW_E2E_REQUIRED=1, set by
// `make test` and CI) instead of skipping.
func required() bool { return os.Getenv("IGGYGW_E2E_REQUIRED") == "1" }

// runScenarios runs each scenario of fam as a subtest of t against the shared environment,
// records the outcomes for the report and prints them.
func runScenarios(t *testing.T, fam Family, scenarios []Scenario) {
	runScenariosOn(t, fam, scenarios, "", func(t *testing.T) *Env { return sharedEnv(t) })
}

// runScenariosOn is runScenarios against the environment envFor returns for each scenario,
// with the results recorded as run on backend ("" for the shared single Iggy server, else
// the Iggy cluster the environment bridges to; the report keeps them apart).
func runScenariosOn(t *testing.T, fam Family, scenarios []Scenario, backend string, envFor func(*testing.T) *Env) {
	if testing.Short() && !required() {
		t.Skip("end-to-end scenarios do not run in -short mode")
	}
	version, missing := fam.Detect()
	if missing != "" {
		status, reason := StatusSkip, "client not installed: "+missing
		if required() {
			status = StatusFail
		}
		for _, sc := range scenarios {
			record(Result{Family: fam.Name, Version: version, Scenario: sc.Name, Covers: sc.Covers, Backend: backend, Status: status, Reason: reason})
		}
		if required() {
			t.Fatalf("%s: %s (IGGYGW_E2E_REQUIRED=1; run scripts/install-test-deps.sh)", fam.Name, reason)
		}
		t.Skipf("%s: %s (run scripts/install-test-deps.sh)", fam.Name, reason)
	}
	t.Logf("client %s %s", fam.Name, version)
	for _, sc := range scenarios {
		sc := sc
		res := Result{Family: fam.Name, Version: version, Scenario: sc.Name, Covers: sc.Covers, Backend: backend}
		t.Run(sc.Name, func(t *testing.T) {
			start := time.Now()
			if reason := pendingReason(sc.Needs); reason != "" {
				res.Status, res.Reason = StatusPending, reason
				record(res)
				t.Skip("pending: " + reason)
			}
			defer func() { recordOutcome(t, res, start) }()
			sc.Run(t, envFor(t))
		})
	}
}

// recordOutcome records res with the outcome of t, which started at start.
func recordOutcome(t testing.TB, res Result, start time.Time) {
	res.Elapsed = time.Since(start).Round(time.Millisecond).String()
	switch {
	case t.Failed():
		res.Status = StatusFail
	case t.Skipped():
		res.Status = StatusSkip
	default:
		res.Status = StatusPass
	}
	record(res)
}
