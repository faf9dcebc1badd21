package metrics

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite docs/METRICS.md from the catalog")

//go:generate go test -run TestMetricsDocIsCurrent -update .

// full returns metrics with everything the gateway registers, the watched gauges included.
func full() *Metrics {
	m := New()
	m.WatchPool(func() (int, int, int) { return 4, 1, 0 })
	m.WatchBudget(func() (int64, int64) { return 10, 100 })
	m.WatchCoordinatorLog(func() (uint64, uint64) { return 1000, 10 })
	m.WatchGroups(func() []GroupLag { return []GroupLag{{Group: "g", State: "Stable", Lag: 5, Partitions: 2}} })
	m.WatchProducers(fixedUsage{})
	m.WatchTailCache(func() TailCacheStats { return TailCacheStats{Hits: 3, Batches: 2, Bytes: 2048} })
	return m
}

// fixedUsage is an idempotent-producer state of constant size.
type fixedUsage struct{}

func (fixedUsage) Producers() int64 { return 3 }
func (fixedUsage) Bytes() int64     { return 300 }

const (
	docBegin = "<!-- BEGIN GENERATED METRICS (go generate ./internal/metrics) -->"
	docEnd   = "<!-- END GENERATED METRICS -->"
)

func catalogMarkdown(c []Info) string {
	var b strings.Builder
	b.WriteString("| Metric | Type | Labels | Meaning |\n| --- | --- | --- | --- |\n")
	for _, i := range c {
		labels := "—"
		if len(i.Labels) > 0 {
			labels = "`" + strings.Join(i.Labels, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", i.Name, i.Type, labels, strings.ReplaceAll(i.Help, "|", "\\|"))
	}
	return b.String()
}

// docs/METRICS.md lists every metric of the catalog; a stale doc fails here.
func TestMetricsDocIsCurrent(t *testing.T) {
	testutil.GeneratedSection{
		Path:       "../../docs/METRICS.md",
		Begin:      docBegin,
		End:        docEnd,
		Body:       catalogMarkdown(full().Catalog()),
		Regenerate: "go generate ./internal/metrics",
	}.Check(t, *update)
}

// Every series the registry exposes under the gateway's namespace is in the catalog, and every
// catalog name follows Prometheus conventions (counters end in _total, units in base units).
func TestCatalogCoversTheRegistry(t *testing.T) {
	m := full()
	exercise(m)
	names := catalogNames(m)
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), namespace+"_") && !names[f.GetName()] {
			t.Errorf("%s is exposed but not in the catalog (docs/METRICS.md)", f.GetName())
		}
	}
	for _, i := range m.Catalog() {
		if (i.Type == "counter") != strings.HasSuffix(i.Name, "_total") {
			t.Errorf("%s: a %s, and only counters end in _total", i.Name, i.Type)
		}
		if strings.Contains(i.Name, "millis") || strings.Contains(i.Name, "_ms") || strings.Contains(i.Name, "kilobytes") {
			t.Errorf("%s: units must be base units (seconds, bytes)", i.Name)
		}
		if i.Help == "" {
			t.Errorf("%s has no help", i.Name)
		}
	}
}

// exercise gives every labelled metric a series.
func exercise(m *Metrics) {
	m.ConnOpened("PLAINTEXT")
	m.ConnRefused("PLAINTEXT")
	m.Refused("PLAINTEXT", listener.RefusedMalformed)
	m.RequestRead("PLAINTEXT", 10)
	m.RequestDone("PLAINTEXT", 0, time.Millisecond, 10, listener.Answered)
	m.CommandDone("poll_messages", time.Millisecond, iggy.OutcomeOK)
	m.LoginRejected(nil)
	m.PrimaryChanged("127.0.0.1:8090", "127.0.0.1:8091", time.Second)
	m.Produced("t", 1, 10)
	m.Fetched("t", 1, 10)
	m.LogSuppressed("connection_opened")
	m.CoordinatorLogRecovered(0)
	m.CoordinatorLogLoaded(time.Second)
}

func catalogNames(m *Metrics) map[string]bool {
	names := map[string]bool{}
	for _, i := range m.Catalog() {
		names[i.Name] = true
		if i.Type == "histogram" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[i.Name+s] = true
			}
		}
	}
	return names
}

var metricRef = regexp.MustCompile(`\b` + namespace + `_[a-z0-9_]+`)

// The Grafana dashboard and the alert rules in deploy/ use only metrics that exist.
func TestDeployReferencesExistingMetrics(t *testing.T) {
	names := catalogNames(full())
	files, err := filepath.Glob("../../deploy/*/*")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".json") && !strings.Contains(f, "/prometheus/") {
			continue
		}
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		refs := metricRef.FindAllString(string(text), -1)
		if len(refs) == 0 {
			t.Errorf("%s references no gateway metric", f)
		}
		for _, r := range refs {
			if !names[r] {
				t.Errorf("%s references %s, which the gateway does not export", f, r)
			}
		}
		checked++
	}
	if checked < 2 {
		t.Fatalf("checked %d files in deploy/, want the dashboard and the alert rules", checked)
	}
}

// promtool validates the alert rules. scripts/install-test-deps.sh unpacks it into
// .cache/prometheus (from Debian's prometheus package); one in PATH is used first. Without it
// the test skips, unless IGGYGW_E2E_REQUIRED=1 (make test, CI), where it fails.
func TestAlertRulesPassPromtool(t *testing.T) {
	promtool := findPromtool(t)
	out, err := exec.Command(promtool, "check", "rules", "../../deploy/prometheus/alerts.yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	// A broken rule file fails the check: the tool really checks what it is given.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	rules := "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: rate(x[5m] > 1\n"
	if err := os.WriteFile(bad, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", bad).CombinedOutput(); err == nil {
		t.Fatalf("promtool accepted a rule with an unclosed parenthesis:\n%s", out)
	}
}

// findPromtool returns promtool from PATH or from where scripts/install-test-deps.sh puts it.
func findPromtool(t *testing.T) string {
	t.Helper()
	if path, err := exec.LookPath("promtool"); err == nil {
		return path
	}
	unpacked, err := filepath.Abs("../../.cache/prometheus/usr/bin/promtool")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(unpacked); err == nil {
		return unpacked
	}
	msg := "promtool is not installed (scripts/install-test-deps.sh unpacks it into .cache/prometheus): the rules are checked for metric names only (TestDeployReferencesExistingMetrics)"
	if os.Getenv("IGGYGW_E2E_REQUIRED") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// The topic label holds at most MaxTopicLabels topics; later ones count as "other", and a
// known topic keeps its own label.
func TestTopicLabelsAreCapped(t *testing.T) {
	l := &topicLabels{max: 2, known: map[string]struct{}{}}
	for _, tc := range []struct{ topic, want string }{
		{"a", "a"}, {"b", "b"}, {"c", otherTopics}, {"a", "a"}, {"d", otherTopics},
	} {
		if got := l.of(tc.topic); got != tc.want {
			t.Errorf("label of %q: %q, want %q", tc.topic, got, tc.want)
		}
	}
}
