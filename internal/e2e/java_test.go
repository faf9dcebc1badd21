package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestJava runs the Apache Kafka command-line tools (Maven Central jars, e2e/bin wrappers
// running the distribution's main classes) against the gateway.
func TestJava(t *testing.T) { runScenarios(t, javaFamily, javaScenarios()) }

// javaScenarios are the Java tools' scenarios (the Iggy cluster test runs some of them too).
func javaScenarios() []Scenario {
	return []Scenario{
		{Name: "broker-api-versions", Needs: []Feature{FeatureCore}, Covers: []Cell{CellMetadata}, Run: javaBrokerAPIVersions},
		{Name: "topics-list", Needs: []Feature{FeatureCore}, Covers: []Cell{CellMetadata}, Run: javaTopicsList},
		// kafka-topics --describe also describes the topic's configs.
		{Name: "topics-describe", Needs: []Feature{FeatureCore, FeatureConfigs}, Covers: []Cell{CellMetadata}, Run: javaTopicsDescribe},
		{Name: "quickstart", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets},
			Covers: []Cell{CellProduce, CellConsume, CellGroups, CellIdempotence}, Run: javaQuickstart},
		{Name: "quickstart-partition", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureProduce, FeatureFetch, FeatureListOffsets},
			Covers: []Cell{CellProduce, CellConsume, CellIdempotence}, Run: javaQuickstartPartition},
		{Name: "keys-headers", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets},
			Covers: []Cell{CellProduce, CellConsume}, Run: javaConsole("none")},
		{Name: "codec-gzip", Needs: []Feature{FeatureCore, FeatureGzip, FeatureFetch, FeatureListOffsets}, Covers: []Cell{CellGzip}, Run: javaConsole("gzip")},
		{Name: "codec-snappy", Needs: []Feature{FeatureCore, FeatureSnappy, FeatureFetch, FeatureListOffsets}, Covers: []Cell{CellSnappy}, Run: javaConsole("snappy")},
		{Name: "codec-lz4", Needs: []Feature{FeatureCore, FeatureLZ4, FeatureFetch, FeatureListOffsets}, Covers: []Cell{CellLZ4}, Run: javaConsole("lz4")},
		{Name: "codec-zstd", Needs: []Feature{FeatureCore, FeatureZstd, FeatureFetch, FeatureListOffsets}, Covers: []Cell{CellZstd}, Run: javaConsole("zstd")},
		{Name: "get-offsets", Needs: []Feature{FeatureCore, FeatureProduce, FeatureListOffsets}, Covers: []Cell{CellConsume}, Run: javaGetOffsets},
		{Name: "topics-admin", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureCreatePartitions, FeatureDeleteTopics},
			Covers: []Cell{CellAdminTopics}, Run: javaTopicsAdmin},
		{Name: "configs", Needs: []Feature{FeatureCore, FeatureConfigs}, Covers: []Cell{CellConfigs}, Run: javaConfigs},
		{Name: "consumer-groups", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets, FeatureGroupAdmin},
			Covers: []Cell{CellGroups, CellOffsets}, Run: javaConsumerGroups},
	}
}

// kafkaTool runs one e2e/bin wrapper with args as a user would type them and fails the test
// unless it exits 0.
func kafkaTool(t *testing.T, stdin, tool string, args ...string) CmdResult {
	t.Helper()
	return mustRun(t, javaCmd(stdin, tool, args...))
}

func javaCmd(stdin, tool string, args ...string) Cmd {
	return Cmd{
		Name: javaTool(tool), Args: args, Stdin: stdin, Timeout: 90 * time.Second,
		// Tools are short-lived: start the JVM fast rather than tune it for throughput.
		Env: []string{"KAFKA_JVM_PERFORMANCE_OPTS=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"},
	}
}

// quickstartTopic is "orders" as in the quick start, unless the Iggy backend or endpoint
// outlives this run (a real server may already hold an "orders" topic from an earlier run).
func quickstartTopic(t *testing.T, env *Env) string {
	if env.iggy != nil && env.iggy.server != nil {
		return "orders"
	}
	return "orders-" + strings.TrimPrefix(TopicName(t), "e2e-")
}

var apiVersionLine = regexp.MustCompile(`^\s*(\w+)\((\d+)\): (?:(\d+) to (\d+) \[usable: (\d+)\]|UNSUPPORTED)`)

// javaBrokerAPIVersions: kafka-broker-api-versions.sh shows this broker with exactly the
// versions the gateway advertises, and every advertised key usable by the Java client.
func javaBrokerAPIVersions(t *testing.T, env *Env) {
	res := kafkaTool(t, "", "kafka-broker-api-versions.sh", "--bootstrap-server", env.Bootstrap)
	lines := strings.Split(res.Stdout, "\n")
	if want := env.Bootstrap + " (id: 1 rack: null"; !strings.HasPrefix(lines[0], want) {
		t.Fatalf("first line %q, want the broker %q...", lines[0], want)
	}
	advertised := map[int16][2]int16{}
	for _, k := range env.APIVersions.ApiKeys {
		advertised[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	// The tool prints only the keys its Kafka version lists for brokers, so keys it does not
	// print are not checked; every key it prints must agree with the advertisement.
	shown := 0
	for _, line := range lines[1:] {
		m := apiVersionLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		shown++
		key := atoi16(t, m[2])
		want, isAdvertised := advertised[key]
		switch {
		case m[3] == "" && isAdvertised:
			t.Errorf("%s(%d) shown UNSUPPORTED, but the gateway advertises %d to %d", m[1], key, want[0], want[1])
		case m[3] != "" && !isAdvertised:
			t.Errorf("%s(%d) shown %s to %s, but the gateway does not advertise it", m[1], key, m[3], m[4])
		case m[3] != "":
			if got := [2]int16{atoi16(t, m[3]), atoi16(t, m[4])}; got != want {
				t.Errorf("%s(%d) shown %d to %d, gateway advertises %d to %d", m[1], key, got[0], got[1], want[0], want[1])
			}
		}
	}
	if shown < len(advertised)/2 {
		t.Errorf("the tool printed %d API lines for %d advertised keys:\n%s", shown, len(advertised), res.Stdout)
	}
	// The client-side transaction APIs are advertised (docs/PROTOCOL-COVERAGE.md, issue 27);
	// WriteTxnMarkers (27) is inter-broker and never is.
	for _, key := range []int16{24, 25, 26, 28} {
		if _, ok := advertised[key]; !ok && !env.External() {
			t.Errorf("transactional key %d not advertised", key)
		}
	}
	if _, ok := advertised[27]; ok {
		t.Error("WriteTxnMarkers (27) advertised")
	}
}

func atoi16(t *testing.T, s string) int16 {
	n, err := strconv.ParseInt(s, 10, 16)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return int16(n)
}

// javaTopicsList: kafka-topics.sh --list shows topics created natively in Iggy.
func javaTopicsList(t *testing.T, env *Env) {
	one, three := env.CreateTopic(t, 1), env.CreateTopic(t, 3)
	res := kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", env.Bootstrap, "--list")
	listed := strings.Fields(res.Stdout)
	for _, name := range []string{one, three} {
		if !slices.Contains(listed, name) {
			t.Errorf("--list does not show %s:\n%s", name, res.Stdout)
		}
	}
}

// javaTopicsDescribe: kafka-topics.sh --describe shows a natively created topic's partition
// count, and this broker as leader of each partition.
func javaTopicsDescribe(t *testing.T, env *Env) {
	three := env.CreateTopic(t, 3)
	res := kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", env.Bootstrap, "--describe", "--topic", three)
	if !regexp.MustCompile(`Topic: ` + regexp.QuoteMeta(three) + `\s.*PartitionCount: 3\s.*ReplicationFactor: 1`).MatchString(res.Stdout) {
		t.Errorf("--describe summary wrong:\n%s", res.Stdout)
	}
	for p := 0; p < 3; p++ {
		re := regexp.MustCompile(fmt.Sprintf(`Topic: %s\s+Partition: %d\s+Leader: 1\s+Replicas: 1\s+Isr: 1`, regexp.QuoteMeta(three), p))
		if !re.MatchString(res.Stdout) {
			t.Errorf("--describe has no line for partition %d led by broker 1:\n%s", p, res.Stdout)
		}
	}
}

// javaQuickstart is the quick start exactly as a user types it.
func javaQuickstart(t *testing.T, env *Env) {
	topic := quickstartTopic(t, env)
	res := kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", env.Bootstrap, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")
	if strings.TrimSpace(res.Stdout) != "Created topic "+topic+"." {
		t.Fatalf("kafka-topics --create printed %q", res.Stdout)
	}
	kafkaTool(t, "hello\n", "kafka-console-producer.sh", "--bootstrap-server", env.Bootstrap, "--topic", topic)
	res = kafkaTool(t, "", "kafka-console-consumer.sh", "--bootstrap-server", env.Bootstrap, "--topic", topic, "--from-beginning", "--max-messages", "1")
	if res.Stdout != "hello\n" {
		t.Fatalf("console consumer printed %q, want %q", res.Stdout, "hello\n")
	}
	if !strings.Contains(res.Stderr, "Processed a total of 1 messages") {
		t.Errorf("console consumer stderr lacks the total:\n%s", res.Stderr)
	}
}

// javaQuickstartPartition is the quick start reading by partition and offset instead of
// through a consumer group.
func javaQuickstartPartition(t *testing.T, env *Env) {
	topic := TopicName(t)
	kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", env.Bootstrap, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")
	kafkaTool(t, "hello\nworld\n", "kafka-console-producer.sh", "--bootstrap-server", env.Bootstrap, "--topic", topic)
	res := kafkaTool(t, "", "kafka-console-consumer.sh", "--bootstrap-server", env.Bootstrap, "--topic", topic,
		"--partition", "0", "--offset", "earliest", "--max-messages", "2")
	if res.Stdout != "hello\nworld\n" {
		t.Fatalf("console consumer printed %q, want %q", res.Stdout, "hello\nworld\n")
	}
}

const javaNull = "<NULL>"

// consoleProducerInput renders records for kafka-console-producer.sh with parse.headers and
// parse.key: headers TAB key TAB value, javaNull for null.
func consoleProducerInput(recs []Rec) string {
	var b strings.Builder
	for _, r := range recs {
		var hs []string
		for _, h := range r.Headers {
			hs = append(hs, h[0]+":"+h[1])
		}
		headers := strings.Join(hs, ",")
		if len(hs) == 0 {
			headers = javaNull
		}
		key := javaNull
		if r.Key != nil {
			key = *r.Key
		}
		value := javaNull
		if r.Value != nil {
			value = *r.Value
		}
		b.WriteString(headers + "\t" + key + "\t" + value + "\n")
	}
	return b.String()
}

var consoleConsumerProps = []string{
	"--formatter-property", "print.timestamp=true", "--formatter-property", "print.partition=true",
	"--formatter-property", "print.offset=true", "--formatter-property", "print.headers=true",
	"--formatter-property", "print.key=true", "--formatter-property", "null.literal=" + javaNull,
}

// parseConsoleConsumer reads the lines kafka-console-consumer.sh prints with
// consoleConsumerProps: CreateTime:ts TAB Partition:p TAB Offset:o TAB headers TAB key TAB value.
func parseConsoleConsumer(t *testing.T, out string) []Rec {
	var recs []Rec
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 6)
		if len(f) != 6 || !strings.HasPrefix(f[0], "CreateTime:") {
			t.Fatalf("unexpected console consumer line %q", line)
		}
		var r Rec
		r.Timestamp, _ = strconv.ParseInt(strings.TrimPrefix(f[0], "CreateTime:"), 10, 64)
		p, _ := strconv.ParseInt(strings.TrimPrefix(f[1], "Partition:"), 10, 32)
		r.Partition = int32(p)
		r.Offset, _ = strconv.ParseInt(strings.TrimPrefix(f[2], "Offset:"), 10, 64)
		if f[3] != "NO_HEADERS" {
			for _, kv := range strings.Split(f[3], ",") {
				k, v, _ := strings.Cut(kv, ":")
				r.Headers = append(r.Headers, [2]string{k, v})
			}
		}
		if f[4] != javaNull {
			r.Key = ptr(f[4])
		}
		if f[5] != javaNull {
			r.Value = ptr(f[5])
		}
		recs = append(recs, r)
	}
	return recs
}

// javaConsole produces sampleRecords with kafka-console-producer.sh using codec and reads them
// back with kafka-console-consumer.sh, checking keys, values, headers, offsets, timestamps.
func javaConsole(codec string) func(t *testing.T, env *Env) {
	return func(t *testing.T, env *Env) {
		topic := env.CreateTopic(t, 1)
		want := sampleRecords()
		start := time.Now()
		kafkaTool(t, consoleProducerInput(want), "kafka-console-producer.sh", "--bootstrap-server", env.Bootstrap, "--topic", topic,
			"--compression-codec", codec,
			"--reader-property", "parse.key=true", "--reader-property", "parse.headers=true", "--reader-property", "null.marker="+javaNull)
		win := windowAround(start)
		args := append([]string{"--bootstrap-server", env.Bootstrap, "--topic", topic, "--partition", "0", "--offset", "earliest",
			"--max-messages", strconv.Itoa(len(want)), "--timeout-ms", "30000"}, consoleConsumerProps...)
		res := kafkaTool(t, "", "kafka-console-consumer.sh", args...)
		checkRecords(t, parseConsoleConsumer(t, res.Stdout), want, 0, win)
	}
}

// javaGetOffsets: kafka-get-offsets.sh reports the earliest and latest offsets after three
// records were produced.
func javaGetOffsets(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 1)
	kafkaTool(t, "a\nb\nc\n", "kafka-console-producer.sh", "--bootstrap-server", env.Bootstrap, "--topic", topic)
	for _, c := range []struct{ time, want string }{{"earliest", topic + ":0:0"}, {"latest", topic + ":0:3"}} {
		res := kafkaTool(t, "", "kafka-get-offsets.sh", "--bootstrap-server", env.Bootstrap, "--topic", topic, "--time", c.time)
		if got := strings.TrimSpace(res.Stdout); got != c.want {
			t.Errorf("--time %s printed %q, want %q", c.time, got, c.want)
		}
	}
}

// javaTopicsAdmin: create, describe, add partitions, refuse a duplicate, delete.
func javaTopicsAdmin(t *testing.T, env *Env) {
	topic := TopicName(t)
	b := env.Bootstrap
	kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", b, "--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1")
	dup := runCmd(t, javaCmd("", "kafka-topics.sh", "--bootstrap-server", b, "--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1"))
	if dup.ExitCode == 0 || !strings.Contains(dup.Stdout+dup.Stderr, "already exists") {
		t.Errorf("creating %s twice: exit %d, want an 'already exists' error\n%s%s", topic, dup.ExitCode, dup.Stdout, dup.Stderr)
	}
	describeCount := func() string {
		res := kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", b, "--describe", "--topic", topic)
		m := regexp.MustCompile(`PartitionCount: (\d+)`).FindStringSubmatch(res.Stdout)
		if m == nil {
			t.Fatalf("--describe shows no partition count:\n%s", res.Stdout)
		}
		return m[1]
	}
	if n := describeCount(); n != "2" {
		t.Errorf("after --create --partitions 2: PartitionCount %s", n)
	}
	kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", b, "--alter", "--topic", topic, "--partitions", "4")
	if n := describeCount(); n != "4" {
		t.Errorf("after --alter --partitions 4: PartitionCount %s", n)
	}
	kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", b, "--delete", "--topic", topic)
	// Deletion is asynchronous in Kafka; the gateway deletes at once. Allow Kafka its delay.
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", b, "--list")
		if !slices.Contains(strings.Fields(res.Stdout), topic) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still listed after --delete:\n%s", topic, res.Stdout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// javaConfigs: kafka-configs.sh describes a topic's retention.ms, alters it and shows the new
// value as a dynamic topic config.
func javaConfigs(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 1)
	b := env.Bootstrap
	res := kafkaTool(t, "", "kafka-configs.sh", "--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic, "--describe", "--all")
	for _, want := range []string{"retention.ms=", "cleanup.policy=delete"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("--describe --all lacks %q:\n%s", want, res.Stdout)
		}
	}
	res = kafkaTool(t, "", "kafka-configs.sh", "--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic, "--alter", "--add-config", "retention.ms=3600000")
	if !strings.Contains(res.Stdout, "Completed updating config for topic "+topic) {
		t.Errorf("--alter printed:\n%s", res.Stdout)
	}
	res = kafkaTool(t, "", "kafka-configs.sh", "--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic, "--describe")
	if !regexp.MustCompile(`retention\.ms=3600000 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:retention\.ms=3600000`).MatchString(res.Stdout) {
		t.Errorf("--describe after --alter does not show retention.ms=3600000 as a dynamic topic config:\n%s", res.Stdout)
	}
}

var groupDescribeRow = regexp.MustCompile(`(?m)^(\S+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s`)

// javaConsumerGroups: a console consumer in a group commits; kafka-consumer-groups.sh lists
// the group, describes its offsets and lag, resets them and deletes the group.
func javaConsumerGroups(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 1)
	group := "g-" + topic
	b := env.Bootstrap
	kafkaTool(t, "m1\nm2\nm3\n", "kafka-console-producer.sh", "--bootstrap-server", b, "--topic", topic)
	res := kafkaTool(t, "", "kafka-console-consumer.sh", "--bootstrap-server", b, "--topic", topic, "--group", group,
		"--from-beginning", "--max-messages", "3", "--timeout-ms", "30000")
	if res.Stdout != "m1\nm2\nm3\n" {
		t.Fatalf("console consumer printed %q", res.Stdout)
	}
	res = kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--list")
	if !slices.Contains(strings.Fields(res.Stdout), group) {
		t.Errorf("--list does not show %s:\n%s", group, res.Stdout)
	}
	describe := func() (current, end, lag string) {
		res := kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--describe", "--group", group)
		for _, m := range groupDescribeRow.FindAllStringSubmatch(res.Stdout, -1) {
			if m[1] == group && m[2] == topic && m[3] == "0" {
				return m[4], m[5], m[6]
			}
		}
		t.Fatalf("--describe has no row for %s partition 0:\n%s", topic, res.Stdout)
		return
	}
	if c, e, l := describe(); c != "3" || e != "3" || l != "0" {
		t.Errorf("after consuming: current %s, log end %s, lag %s; want 3, 3, 0", c, e, l)
	}
	res = kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
	if !regexp.MustCompile(regexp.QuoteMeta(group) + `\s+` + regexp.QuoteMeta(topic) + `\s+0\s+0`).MatchString(res.Stdout) {
		t.Errorf("--reset-offsets --to-earliest printed:\n%s", res.Stdout)
	}
	if c, e, l := describe(); c != "0" || e != "3" || l != "3" {
		t.Errorf("after reset: current %s, log end %s, lag %s; want 0, 3, 3", c, e, l)
	}
	res = kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--delete", "--group", group)
	if !strings.Contains(res.Stdout, "Deletion of requested consumer groups ('"+group+"') was successful.") {
		t.Errorf("--delete printed:\n%s", res.Stdout)
	}
	res = kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--list")
	if slices.Contains(strings.Fields(res.Stdout), group) {
		t.Errorf("%s still listed after --delete:\n%s", group, res.Stdout)
	}
}
