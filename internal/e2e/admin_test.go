package e2e

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// Topic administration and configs beyond the basic admin scenarios: what reaches Iggy, what
// is refused and how, broker configs, auto-creation.

// checkCleanupPolicy fails t unless DescribeConfigs reports each topic of want with the
// cleanup.policy it maps to (frameworks create their internal topics with one).
func checkCleanupPolicy(ctx context.Context, t *testing.T, adm *kadm.Client, want map[string]string) {
	t.Helper()
	topics := make([]string, 0, len(want))
	for topic := range want {
		topics = append(topics, topic)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		t.Fatal(err)
	}
	for topic, policy := range want {
		rc, err := rcs.On(topic, nil)
		if err != nil || rc.Err != nil {
			t.Fatalf("describe %s: %v %v", topic, err, rc.Err)
		}
		got := "(not reported)"
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" {
				got = c.MaybeValue()
			}
		}
		if got != policy {
			t.Errorf("%s cleanup.policy = %s, want %s", topic, got, policy)
		}
	}
}

// TestJavaTopicAdmin runs kafka-topics.sh and kafka-configs.sh against the gateway and checks
// the Iggy topics behind what they show.
func TestJavaTopicAdmin(t *testing.T) {
	runScenarios(t, javaFamily, []Scenario{
		{Name: "configs-iggy", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureConfigs},
			Covers: []Cell{CellAdminTopics, CellConfigs}, Run: javaConfigsIggy},
		{Name: "configs-refused", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureConfigs},
			Covers: []Cell{CellConfigs}, Run: javaConfigsRefused},
	})
}

// TestFranzGoTopicAdmin runs kadm's topic administration against the gateway.
func TestFranzGoTopicAdmin(t *testing.T) {
	runScenarios(t, franzFamily, []Scenario{
		{Name: "admin-iggy", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureCreatePartitions, FeatureDeleteTopics, FeatureConfigs},
			Covers: []Cell{CellAdminTopics, CellConfigs}, Run: franzAdminIggy},
		{Name: "admin-refusals", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureCreatePartitions, FeatureDeleteTopics, FeatureConfigs},
			Covers: []Cell{CellAdminTopics, CellConfigs}, Run: franzAdminRefusals},
		{Name: "auto-create", Needs: []Feature{FeatureCore, FeatureAutoCreate}, Covers: []Cell{CellMetadata}, Run: franzAutoCreate},
		{Name: "auto-create-produce", Needs: []Feature{FeatureCore, FeatureAutoCreate, FeatureProduce}, Covers: []Cell{CellProduce}, Run: franzAutoCreateProduce},
	})
}

// iggyTopic reads the Iggy topic behind a Kafka topic of the default mapping; nil when it
// does not exist. Only for harness gateways (env.iggy is nil for an external endpoint).
func (e *Env) iggyTopic(t *testing.T, name string) *iggy.Topic {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := e.iggy.iggyClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := c.GetTopic(ctx, iggy.Name(kafkaStream), iggy.Name(name))
	if iggy.IsCode(err, iggy.CodeTopicNameNotFound, iggy.CodeTopicIDNotFound, iggy.CodeStreamNameNotFound, iggy.CodeStreamIDNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("Iggy topic %s/%s: %v", kafkaStream, name, err)
	}
	return tp
}

// wantIggyRetention checks an Iggy topic's expiry (µs) and max size against what Kafka configs
// were set; skipped for external endpoints.
func wantIggyRetention(t *testing.T, env *Env, topic string, expiry, maxSize uint64) {
	t.Helper()
	if env.External() {
		return
	}
	tp := env.iggyTopic(t, topic)
	if tp == nil {
		t.Fatalf("no Iggy topic behind %s", topic)
	}
	if tp.MessageExpiry != expiry || tp.MaxTopicSize != maxSize {
		t.Errorf("Iggy topic %s: message expiry %d µs, max size %d; want %d µs, %d", topic, tp.MessageExpiry, tp.MaxTopicSize, expiry, maxSize)
	}
}

// javaConfigsIggy: retention set with kafka-topics --create --config and kafka-configs
// --add-config/--delete-config is what --describe shows and what the Iggy topic has.
func javaConfigsIggy(t *testing.T, env *Env) {
	topic := TopicName(t)
	b := env.Bootstrap
	kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", b, "--create", "--topic", topic, "--partitions", "2",
		"--replication-factor", "1", "--config", "retention.ms=60000")
	res := kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", b, "--describe", "--topic", topic)
	if !regexp.MustCompile(`PartitionCount: 2\s.*Configs: .*retention\.ms=60000`).MatchString(res.Stdout) {
		t.Errorf("--describe after --create --config retention.ms=60000:\n%s", res.Stdout)
	}
	wantIggyRetention(t, env, topic, 60_000_000, iggy.Never)

	configs := func(args ...string) CmdResult {
		return kafkaTool(t, "", "kafka-configs.sh", append([]string{"--bootstrap-server", b, "--entity-type", "topics", "--entity-name", topic}, args...)...)
	}
	res = configs("--alter", "--add-config", "retention.ms=3600000,retention.bytes=2147483648")
	if !strings.Contains(res.Stdout, "Completed updating config for topic "+topic) {
		t.Errorf("--alter printed:\n%s", res.Stdout)
	}
	res = configs("--describe")
	for _, want := range []string{
		`retention\.ms=3600000 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:retention\.ms=3600000, DEFAULT_CONFIG:log\.retention\.ms=-1\}`,
		`retention\.bytes=2147483648 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:retention\.bytes=2147483648, DEFAULT_CONFIG:log\.retention\.bytes=-1\}`,
	} {
		if !regexp.MustCompile(want).MatchString(res.Stdout) {
			t.Errorf("--describe lacks %s:\n%s", want, res.Stdout)
		}
	}
	wantIggyRetention(t, env, topic, 3_600_000_000, 2<<30)

	configs("--alter", "--delete-config", "retention.ms")
	res = configs("--describe")
	if strings.Contains(res.Stdout, "retention.ms=") || !strings.Contains(res.Stdout, "retention.bytes=2147483648") {
		t.Errorf("--describe after --delete-config retention.ms (only retention.bytes is set now):\n%s", res.Stdout)
	}
	res = configs("--describe", "--all")
	if !regexp.MustCompile(`retention\.ms=-1 sensitive=false synonyms=\{DEFAULT_CONFIG:log\.retention\.ms=-1\}`).MatchString(res.Stdout) {
		t.Errorf("--describe --all after --delete-config retention.ms:\n%s", res.Stdout)
	}
	wantIggyRetention(t, env, topic, iggy.Never, 2<<30)
}

// javaConfigsRefused: what the gateway cannot honour fails with a message that says why, and
// changes nothing; broker configs are described and read-only.
func javaConfigsRefused(t *testing.T, env *Env) {
	if env.External() {
		t.Skip("checks the gateway's refusals, which Kafka does not make")
	}
	topic := TopicName(t)
	b := env.Bootstrap
	refused := func(want string, tool string, args ...string) {
		t.Helper()
		res := runCmd(t, javaCmd("", tool, append([]string{"--bootstrap-server", b}, args...)...))
		if res.ExitCode == 0 || !strings.Contains(res.Stdout+res.Stderr, want) {
			t.Errorf("%s %v: exit %d, want a failure mentioning %q\n%s%s", tool, args, res.ExitCode, want, res.Stdout, res.Stderr)
		}
	}
	refused("Iggy replicates every partition to every node", "kafka-topics.sh", "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "3")
	refused("never deletes", "kafka-topics.sh", "--create", "--topic", topic, "--config", "cleanup.policy=compact", "--config", "retention.ms=1000")
	if env.iggyTopic(t, topic) != nil {
		t.Fatalf("a refused --create created %s", topic)
	}
	kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", b, "--create", "--topic", topic)
	refused("does not recompress", "kafka-configs.sh", "--entity-type", "topics", "--entity-name", topic,
		"--alter", "--add-config", "compression.type=zstd")
	refused("retention.bytes", "kafka-configs.sh", "--entity-type", "topics", "--entity-name", topic,
		"--alter", "--add-config", "retention.bytes=1000")
	wantIggyRetention(t, env, topic, iggy.Never, iggy.Never)
	refused("IGGY_KAFKA_", "kafka-configs.sh", "--entity-type", "brokers", "--entity-name", "1",
		"--alter", "--add-config", "num.partitions=4")

	res := kafkaTool(t, "", "kafka-configs.sh", "--bootstrap-server", b, "--entity-type", "brokers", "--entity-name", "1", "--describe", "--all")
	for _, want := range []string{"num.partitions=1 sensitive=false", "log.retention.ms=-1 sensitive=false", "auto.create.topics.enable=false sensitive=false"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("broker --describe --all lacks %q:\n%s", want, res.Stdout)
		}
	}
}

// franzAdminIggy: every kadm administration call, checked against the Iggy topic.
func franzAdminIggy(t *testing.T, env *Env) {
	topic := TopicName(t)
	ctx := ctxFor(t, 60*time.Second)
	adm := env.Admin(t)
	day, size := "86400000", "4294967296"
	if r, err := adm.ValidateCreateTopics(ctx, 3, 1, map[string]*string{"retention.ms": &day}, topic); err != nil || r[topic].Err != nil {
		t.Fatalf("validate-only create: %v %v", err, r[topic].Err)
	}
	if !env.External() && env.iggyTopic(t, topic) != nil {
		t.Fatal("validate-only create created the topic")
	}
	created, err := adm.CreateTopic(ctx, 3, -1, map[string]*string{"retention.ms": &day, "retention.bytes": &size}, topic)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if c := created.Configs["retention.ms"]; created.NumPartitions != 3 || created.ReplicationFactor != 1 || c.MaybeValue() != day {
		t.Errorf("create result: %+v", created)
	}
	wantIggyRetention(t, env, topic, 86_400_000_000, 4<<30)

	// Legacy AlterConfigs replaces the set: retention.bytes, not named, goes back to -1.
	hour := "3600000"
	altered, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: &hour}}, topic)
	if err == nil {
		err = altered[0].Err
	}
	if err != nil {
		t.Fatalf("legacy alter: %v", err)
	}
	wantIggyRetention(t, env, topic, 3_600_000_000, iggy.Never)
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe: %v %v", err, rc.Err)
	}
	for _, c := range rc.Configs {
		switch c.Key {
		case "retention.ms":
			if c.MaybeValue() != hour || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
				t.Errorf("retention.ms: %+v", c)
			}
		case "retention.bytes":
			if c.MaybeValue() != "-1" || c.Source != kmsg.ConfigSourceDefaultConfig {
				t.Errorf("retention.bytes: %+v", c)
			}
		}
	}

	if r, err := adm.ValidateUpdatePartitions(ctx, 5, topic); err != nil || r[topic].Err != nil {
		t.Fatalf("validate-only partitions: %v %v", err, r[topic].Err)
	}
	if r, err := adm.UpdatePartitions(ctx, 5, topic); err != nil || r[topic].Err != nil {
		t.Fatalf("set 5 partitions: %v %v", err, r[topic].Err)
	}
	if !env.External() {
		if tp := env.iggyTopic(t, topic); tp == nil || tp.PartitionsCount != 5 {
			t.Errorf("Iggy topic after setting 5 partitions: %+v", tp)
		}
	}
	deleted, err := adm.DeleteTopics(ctx, topic)
	if err == nil {
		err = deleted.Error()
	}
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	if !env.External() && env.iggyTopic(t, topic) != nil {
		t.Error("the Iggy topic survived the deletion")
	}
}

// franzAdminRefusals: the codes Kafka clients rely on, for what the gateway (like Kafka)
// refuses.
func franzAdminRefusals(t *testing.T, env *Env) {
	topic := TopicName(t)
	ctx := ctxFor(t, 60*time.Second)
	adm := env.Admin(t)
	for _, tc := range []struct {
		partitions int32
		rf         int16
		configs    map[string]*string
		name       string
		want       error
	}{
		{1, 1, nil, "bad/name", kerr.InvalidTopicException},
		{0, 1, nil, topic, kerr.InvalidPartitions},
		{1, 0, nil, topic, kerr.InvalidReplicationFactor},
		{1, 1, map[string]*string{"retention.ms": ptr("-7")}, topic, kerr.InvalidConfig},
	} {
		r, _ := adm.CreateTopic(ctx, tc.partitions, tc.rf, tc.configs, tc.name)
		if !errors.Is(r.Err, tc.want) {
			t.Errorf("create %s with %d partitions, rf %d, configs %v: %v, want %v", tc.name, tc.partitions, tc.rf, tc.configs, r.Err, tc.want)
		}
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	if r, _ := adm.CreateTopic(ctx, 2, 1, nil, topic); !errors.Is(r.Err, kerr.TopicAlreadyExists) {
		t.Errorf("second create: %v", r.Err)
	}
	if r, err := adm.UpdatePartitions(ctx, 1, topic); err != nil || !errors.Is(r[topic].Err, kerr.InvalidPartitions) {
		t.Errorf("shrink to 1 partition: %v %v", err, r[topic].Err)
	}
	if r, err := adm.DeleteTopics(ctx, topic+"-missing"); err != nil || !errors.Is(r[topic+"-missing"].Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("delete a missing topic: %v %v", err, r[topic+"-missing"].Err)
	}
	ms := "1000"
	if r, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.AppendConfig, Name: "retention.ms", Value: &ms}}, topic); err != nil || !errors.Is(r[0].Err, kerr.InvalidConfig) {
		t.Errorf("APPEND to retention.ms: %v %v", err, r[0].Err)
	}
}

// franzAutoCreate: with auto-creation on, Metadata that allows it creates a missing topic with
// the configured partition count; without, or when the request does not allow it, nothing is
// created.
func franzAutoCreate(t *testing.T, env *Env) {
	if env.External() {
		t.Skip("needs a gateway with IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED")
	}
	metadata := func(e *Env, topic string, allow bool) int16 {
		t.Helper()
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = allow
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctxFor(t, 30*time.Second), e.Kgo(t))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].ErrorCode
	}
	topic := TopicName(t)
	if code := metadata(env, topic, true); code != kerr.UnknownTopicOrPartition.Code || env.iggyTopic(t, topic) != nil {
		t.Fatalf("shared gateway (auto-create off): code %d; topic created: %v", code, env.iggyTopic(t, topic) != nil)
	}
	auto := startOwnGateway(t, "IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED=true", "IGGY_KAFKA_AUTO_CREATE_TOPICS_PARTITIONS=3")
	if code := metadata(auto, topic, false); code != kerr.UnknownTopicOrPartition.Code || env.iggyTopic(t, topic) != nil {
		t.Fatalf("auto-create on, not allowed by the request: code %d", code)
	}
	if code := metadata(auto, topic, true); code != 0 {
		t.Fatalf("auto-create: code %d", code)
	}
	if tp := env.iggyTopic(t, topic); tp == nil || tp.PartitionsCount != 3 {
		t.Fatalf("auto-created Iggy topic: %+v", tp)
	}
}

// franzAutoCreateProduce: a producer that allows auto-creation writes to a topic that did not
// exist, through a gateway with auto-creation on.
func franzAutoCreateProduce(t *testing.T, env *Env) {
	if env.External() {
		t.Skip("needs a gateway with IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED")
	}
	auto := startOwnGateway(t, "IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED=true", "IGGY_KAFKA_AUTO_CREATE_TOPICS_PARTITIONS=2")
	topic := TopicName(t)
	cl := auto.Kgo(t, kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic(topic))
	r := cl.ProduceSync(ctxFor(t, 30*time.Second), &kgo.Record{Value: []byte("hello")})
	if err := r.FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	tp := env.iggyTopic(t, topic)
	if tp == nil || tp.PartitionsCount != 2 || tp.MessagesCount != 1 {
		t.Fatalf("auto-created Iggy topic: %+v", tp)
	}
}
