package e2e

import (
	"strings"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
)

func TestRaceReports(t *testing.T) {
	out := childproc.NewOutput(1 << 10)
	out.Write([]byte("start\n==================\nWARNING: DATA RACE\nWrite at 0x1 by goroutine 7:\n==================\nafter\n"))
	got := raceReports(out)
	if !strings.HasPrefix(got, "WARNING: DATA RACE\n") || strings.Contains(got, "after") || strings.Contains(got, "start") {
		t.Errorf("raceReports = %q", got)
	}
	if raceReports(childproc.NewOutput(10)) != "" {
		t.Error("race report from an empty output")
	}
}

func TestTopicNameIsValidAndUnique(t *testing.T) {
	a, b := TopicName(t), TopicName(t)
	if a == b {
		t.Errorf("two calls gave the same name %q", a)
	}
	for _, r := range a {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			t.Errorf("name %q has %q, outside [a-z0-9-]", a, r)
		}
	}
	if !strings.HasPrefix(a, "e2e-topicnameisvalidandunique-") {
		t.Errorf("name %q does not derive from the test name", a)
	}
}

func TestPendingReason(t *testing.T) {
	t.Setenv("IGGYGW_E2E_RUN_PENDING", "")
	saved := pendingFeatures
	t.Cleanup(func() { pendingFeatures = saved })
	pendingFeatures = map[Feature]string{FeatureFetch: "fetch not implemented yet"}
	if got := pendingReason([]Feature{FeatureCore, FeatureProduce}); got != "" {
		t.Errorf("no pending need: reason %q", got)
	}
	if got := pendingReason([]Feature{FeatureCore, FeatureFetch}); got != "fetch not implemented yet" {
		t.Errorf("pending need: reason %q", got)
	}
	t.Setenv("IGGYGW_E2E_RUN_PENDING", "1")
	if got := pendingReason([]Feature{FeatureFetch}); got != "" {
		t.Errorf("IGGYGW_E2E_RUN_PENDING=1: reason %q", got)
	}
}

func TestCmdStringQuotes(t *testing.T) {
	c := Cmd{Name: "kcat", Args: []string{"-b", "127.0.0.1:1", "-f", `%k %s\n`, "it's"}}
	want := `kcat -b 127.0.0.1:1 -f '%k %s\n' 'it'\''s'`
	if got := c.String(); got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}

func TestRunCmdReportsExitAndTimeout(t *testing.T) {
	res := runCmd(t, Cmd{Name: "sh", Args: []string{"-c", "echo out; echo err >&2; exit 3"}})
	if res.ExitCode != 3 || res.Stdout != "out\n" || res.Stderr != "err\n" || res.Err != nil {
		t.Errorf("result %+v", res)
	}
	res = runCmd(t, Cmd{Name: "sleep", Args: []string{"10"}, Timeout: 100_000_000})
	if res.Err == nil || res.ExitCode != -1 {
		t.Errorf("timeout: result %+v, want an error and exit -1", res)
	}
}
