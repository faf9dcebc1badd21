package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestJavaConsumerProtocol runs the Java tools' consumer with group.protocol=consumer
// (KIP-848): the gateway assigns the partitions (docs/CONSUMER-GROUPS.md, "Consumer
// protocol").
func TestJavaConsumerProtocol(t *testing.T) {
	runScenarios(t, javaFamily, []Scenario{
		{Name: "consumer-protocol", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets, FeatureGroupAdmin},
			Covers: []Cell{CellGroups, CellOffsets}, Run: javaConsumerProtocol},
		{Name: "consumer-protocol-members", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets},
			Covers: []Cell{CellGroups}, Run: javaConsumerProtocolMembers},
	})
}

func javaConsumerProtocol(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 3)
	group := "cp-" + topic
	b := env.Bootstrap
	consume := func(n string, props ...string) []string {
		args := []string{"--bootstrap-server", b, "--topic", topic, "--group", group, "--from-beginning",
			"--max-messages", n, "--timeout-ms", "30000", "--command-property", "group.protocol=consumer"}
		for _, p := range props {
			args = append(args, "--command-property", p)
		}
		res := kafkaTool(t, "", "kafka-console-consumer.sh", args...)
		got := strings.Fields(res.Stdout)
		slices.Sort(got)
		return got
	}
	kafkaTool(t, "a1\na2\na3\na4\n", "kafka-console-producer.sh", "--bootstrap-server", b, "--topic", topic)
	if got := consume("4"); !slices.Equal(got, []string{"a1", "a2", "a3", "a4"}) {
		t.Fatalf("first consumer printed %q", got)
	}
	// The group commits what it consumed: a static member of the same group, with the
	// server-side range assignor, gets only what came after.
	kafkaTool(t, "b1\nb2\n", "kafka-console-producer.sh", "--bootstrap-server", b, "--topic", topic)
	if got := consume("2", "group.instance.id=static-1", "group.remote.assignor=range"); !slices.Equal(got, []string{"b1", "b2"}) {
		t.Fatalf("second consumer printed %q", got)
	}
	res := kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--list", "--type")
	t.Logf("--list --type:\n%s", res.Stdout)
	if !strings.Contains(res.Stdout, group) || !regexp.MustCompile(`(?mi)^`+regexp.QuoteMeta(group)+`\s+consumer\b`).MatchString(res.Stdout) {
		t.Errorf("--list --type does not show %s as a consumer group:\n%s", group, res.Stdout)
	}
	res = kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--describe", "--group", group)
	lag := map[string]string{}
	for _, m := range groupDescribeRow.FindAllStringSubmatch(res.Stdout, -1) {
		if m[1] == group && m[2] == topic {
			lag[m[3]] = m[6]
		}
	}
	if len(lag) != 3 || lag["0"] != "0" || lag["1"] != "0" || lag["2"] != "0" {
		t.Errorf("--describe: want lag 0 on 3 partitions, got %v:\n%s", lag, res.Stdout)
	}
	// A static member closing leaves for a while (member epoch -2): the group keeps it, and
	// its partitions, for the session timeout.
	res = kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--describe", "--group", group, "--state")
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(group) + `\s.*\srange\s+Stable\s+1\s*$`).MatchString(res.Stdout) {
		t.Errorf("--describe --state does not show the static member kept with the range assignor:\n%s", res.Stdout)
	}
	// The instance restarts (a new member id): it takes its place back at once.
	kafkaTool(t, "c1\n", "kafka-console-producer.sh", "--bootstrap-server", b, "--topic", topic)
	if got := consume("1", "group.instance.id=static-1", "group.remote.assignor=range"); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("restarted static member printed %q", got)
	}
	res = kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--describe", "--group", group, "--members")
	if !strings.Contains(res.Stdout, "static-1") {
		t.Errorf("--describe --members does not show the static member:\n%s", res.Stdout)
	}
}

// javaConsumerProtocolMembers runs two Java consumers of one group at once: the second joins
// while the first consumes (the coordinator revokes from the first before it assigns to the
// second), records keep coming, then both leave. Every record is printed exactly once.
func javaConsumerProtocolMembers(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 4)
	group := "cpm-" + topic
	b := env.Bootstrap
	produce := func(from, to int) {
		var in strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&in, "k%d\tv%d\n", i, i)
		}
		kafkaTool(t, in.String(), "kafka-console-producer.sh", "--bootstrap-server", b, "--topic", topic,
			"--reader-property", "parse.key=true")
	}
	var wg sync.WaitGroup
	results := make([]CmdResult, 2)
	member := func(i int) {
		defer wg.Done()
		results[i] = runCmd(t, javaCmd("", "kafka-console-consumer.sh", "--bootstrap-server", b, "--topic", topic,
			"--group", group, "--from-beginning", "--timeout-ms", "12000",
			"--command-property", "group.protocol=consumer"))
	}
	produce(0, 40)
	wg.Add(2)
	go member(0)
	time.Sleep(4 * time.Second)
	go member(1)
	time.Sleep(4 * time.Second)
	produce(40, 80)
	wg.Wait()
	counts := map[string]int{}
	for i, res := range results {
		if res.Err != nil || res.ExitCode != 0 {
			t.Fatalf("consumer %d failed (exit %d, %v):\n%s", i, res.ExitCode, res.Err, res.Stderr)
		}
		for _, v := range strings.Fields(res.Stdout) {
			if strings.HasPrefix(v, "v") {
				counts[v]++
			}
		}
	}
	for i := range 80 {
		if n := counts[fmt.Sprintf("v%d", i)]; n != 1 {
			t.Errorf("v%d printed %d times", i, n)
		}
	}
	t.Logf("consumer 0 printed %d records, consumer 1 %d", len(strings.Fields(results[0].Stdout)), len(strings.Fields(results[1].Stdout)))
}

// TestPythonConsumerProtocol runs confluent-kafka (librdkafka 2.12+) with
// group.protocol=consumer through the group scenario of the Python script: consume, commit, and
// a second member that resumes from the commits.
func TestPythonConsumerProtocol(t *testing.T) {
	runScenarios(t, pythonFamily, []Scenario{
		{Name: "group-consumer-protocol", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets},
			Covers: []Cell{CellGroups, CellOffsets}, Run: pythonGroupWith(pythonScript, "--group-protocol", "consumer")},
	})
}
