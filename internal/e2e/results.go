package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
)

// Scenario outcomes.
const (
	StatusPass    = "pass"
	StatusFail    = "fail"
	StatusSkip    = "skip"    // client missing without IGGYGW_E2E_REQUIRED, or skipped by the scenario
	StatusPending = "pending" // needs a gateway feature listed in pendingFeatures
)

// Result is the outcome of one scenario for one client.
type Result struct {
	Family   string `json:"family"`
	Version  string `json:"version"`
	Scenario string `json:"scenario"`
	Covers   []Cell `json:"covers"`
	// Backend is "" for the single Iggy server every scenario shares, else the Iggy cluster
	// the scenario ran behind (reported in a table of its own).
	Backend string `json:"backend,omitempty"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Elapsed string `json:"elapsed,omitempty"`
}

// Results is the file IGGYGW_E2E_RESULTS names, read by cmd/compat-report.
type Results struct {
	Results []Result `json:"results"`
}

var recorded struct {
	mu   sync.Mutex
	list []Result
}

func record(r Result) {
	recorded.mu.Lock()
	defer recorded.mu.Unlock()
	recorded.list = append(recorded.list, r)
}

// recordedResults returns the outcomes so far, grouped by family in run order.
func recordedResults() []Result {
	recorded.mu.Lock()
	defer recorded.mu.Unlock()
	out := append([]Result(nil), recorded.list...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Family < out[j].Family })
	return out
}

// writeResults writes rs to path as JSON.
func writeResults(path string, rs []Result) error {
	data, err := json.MarshalIndent(Results{Results: rs}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// printSummary prints which clients and scenarios ran and how they ended, one line each.
func printSummary(w io.Writer, rs []Result) {
	if len(rs) == 0 {
		return
	}
	counts := map[string]int{}
	fmt.Fprintln(w, "e2e summary (client, version, scenario, outcome):")
	for _, r := range rs {
		counts[r.Status]++
		name := r.Scenario
		if r.Backend != "" {
			name = r.Backend + ": " + name
		}
		line := fmt.Sprintf("  %-9s %-34s %-28s %s", r.Family, r.Version, name, r.Status)
		if r.Reason != "" {
			line += " (" + r.Reason + ")"
		}
		if r.Elapsed != "" {
			line += " " + r.Elapsed
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "e2e totals: pass=%d fail=%d pending=%d skip=%d\n",
		counts[StatusPass], counts[StatusFail], counts[StatusPending], counts[StatusSkip])
}
