package e2e

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
)

// TestKafkaGo runs segmentio/kafka-go against the gateway.
func TestKafkaGo(t *testing.T) { runScenarios(t, kafkaGoFamily, kafkaGoScenarios()) }

// kafkaGoScenarios are kafka-go's scenarios (the Iggy cluster test runs some of them too).
func kafkaGoScenarios() []Scenario {
	scenarios := []Scenario{
		{Name: "metadata", Needs: []Feature{FeatureCore}, Covers: []Cell{CellMetadata}, Run: kafkaGoMetadata},
	}
	for _, c := range codecs {
		covers := []Cell{c.cell}
		if c.name == "none" {
			covers = append(covers, CellConsume)
		}
		scenarios = append(scenarios, Scenario{Name: "produce-consume-" + c.name,
			Needs: []Feature{FeatureCore, FeatureProduce, c.need, FeatureFetch, FeatureListOffsets}, Covers: covers, Run: kafkaGoProduceConsume(c.name)})
	}
	scenarios = append(scenarios,
		Scenario{Name: "group", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets},
			Covers: []Cell{CellGroups, CellOffsets}, Run: kafkaGoGroup},
		Scenario{Name: "admin", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureCreatePartitions, FeatureDeleteTopics, FeatureConfigs},
			Covers: []Cell{CellAdminTopics, CellConfigs}, Run: kafkaGoAdmin},
	)
	return scenarios
}

// kafkaGoClient and kafkaGoWriter use a transport of their own: kafka-go's default transport
// is shared by the whole process and caches metadata from before a scenario's topic existed.
func kafkaGoClient(env *Env) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(env.Bootstrap), Timeout: 20 * time.Second, Transport: &kafka.Transport{}}
}

func kafkaGoWriter(env *Env, topic string) *kafka.Writer {
	return &kafka.Writer{Addr: kafka.TCP(env.Bootstrap), Topic: topic, RequiredAcks: kafka.RequireAll,
		BatchTimeout: 10 * time.Millisecond, Transport: &kafka.Transport{}}
}

func kafkaGoMetadata(t *testing.T, env *Env) {
	one, three := env.CreateTopic(t, 1), env.CreateTopic(t, 3)
	md, err := kafkaGoClient(env).Metadata(ctxFor(t, 30*time.Second), &kafka.MetadataRequest{Topics: []string{one, three}})
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 1 || md.Brokers[0].ID != 1 || net.JoinHostPort(md.Brokers[0].Host, strconv.Itoa(md.Brokers[0].Port)) != env.Bootstrap {
		t.Errorf("brokers %+v, want broker 1 at %s", md.Brokers, env.Bootstrap)
	}
	want := map[string]int{one: 1, three: 3}
	for _, topic := range md.Topics {
		if topic.Error != nil || len(topic.Partitions) != want[topic.Name] {
			t.Errorf("topic %s: %d partitions (%v), want %d", topic.Name, len(topic.Partitions), topic.Error, want[topic.Name])
		}
		for _, p := range topic.Partitions {
			if p.Leader.ID != 1 || p.Error != nil {
				t.Errorf("topic %s partition %d: leader %d (%v), want 1", topic.Name, p.ID, p.Leader.ID, p.Error)
			}
		}
		delete(want, topic.Name)
	}
	if len(want) != 0 {
		t.Errorf("topics missing from metadata: %v", want)
	}
}

func kafkaGoProduceConsume(codec string) func(t *testing.T, env *Env) {
	return func(t *testing.T, env *Env) {
		topic := env.CreateTopic(t, 1)
		ctx := ctxFor(t, 60*time.Second)
		w := kafkaGoWriter(env, topic)
		if codec != "none" {
			w.Compression = map[string]compress.Compression{"gzip": compress.Gzip, "snappy": compress.Snappy, "lz4": compress.Lz4, "zstd": compress.Zstd}[codec]
		}
		defer w.Close()
		want := timedSampleRecords()
		var msgs []kafka.Message
		for _, r := range want {
			m := kafka.Message{Time: time.UnixMilli(r.Timestamp)}
			if r.Key != nil {
				m.Key = []byte(*r.Key)
			}
			if r.Value != nil {
				m.Value = []byte(*r.Value)
			}
			for _, h := range r.Headers {
				m.Headers = append(m.Headers, kafka.Header{Key: h[0], Value: []byte(h[1])})
			}
			msgs = append(msgs, m)
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			t.Fatalf("write: %v", err)
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{env.Bootstrap}, Topic: topic, Partition: 0, MaxWait: 500 * time.Millisecond})
		defer r.Close()
		if err := r.SetOffset(kafka.FirstOffset); err != nil {
			t.Fatal(err)
		}
		var got []Rec
		for len(got) < len(want) {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatalf("read after %d records: %v", len(got), err)
			}
			rec := Rec{Partition: int32(m.Partition), Offset: m.Offset, Timestamp: m.Time.UnixMilli()}
			// kafka-go does not tell a null key or value from an empty one.
			if len(m.Key) > 0 {
				rec.Key = ptr(string(m.Key))
			}
			if len(m.Value) > 0 {
				rec.Value = ptr(string(m.Value))
			}
			for _, h := range m.Headers {
				rec.Headers = append(rec.Headers, [2]string{h.Key, string(h.Value)})
			}
			got = append(got, rec)
		}
		checkRecords(t, got, want, 0, timeWindow{})
	}
}

func kafkaGoGroup(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 2)
	group := "g-" + topic
	ctx := ctxFor(t, 60*time.Second)
	var want []string
	for p := 0; p < 2; p++ {
		w := kafkaGoWriter(env, topic)
		w.Balancer = kafkaGoPartition(p)
		for i := 0; i < 2; i++ {
			v := fmt.Sprintf("v%d-%d", p, i)
			if err := w.WriteMessages(ctx, kafka.Message{Value: []byte(v)}); err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprintf("%d/%d %s", p, i, v))
		}
		w.Close()
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{env.Bootstrap}, GroupID: group, Topic: topic,
		StartOffset: kafka.FirstOffset, MaxWait: 500 * time.Millisecond, HeartbeatInterval: time.Second})
	defer r.Close()
	var got []string
	for len(got) < len(want) {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("fetch after %v: %v", got, err)
		}
		got = append(got, fmt.Sprintf("%d/%d %s", m.Partition, m.Offset, m.Value))
		if err := r.CommitMessages(ctx, m); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("group read %v, want %v", got, want)
	}
	resp, err := kafkaGoClient(env).OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.Topics[topic] {
		if p.Error != nil || p.CommittedOffset != 2 {
			t.Errorf("committed offset of partition %d: %d (%v), want 2", p.Partition, p.CommittedOffset, p.Error)
		}
	}
	if len(resp.Topics[topic]) != 2 {
		t.Errorf("offsets fetched for %d partitions, want 2", len(resp.Topics[topic]))
	}
}

// kafkaGoPartition is a balancer that always picks one partition.
type kafkaGoPartition int

func (p kafkaGoPartition) Balance(kafka.Message, ...int) int { return int(p) }

func kafkaGoAdmin(t *testing.T, env *Env) {
	topic := TopicName(t)
	ctx := ctxFor(t, 60*time.Second)
	cl := kafkaGoClient(env)
	created, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 2, ReplicationFactor: 1,
		ConfigEntries: []kafka.ConfigEntry{{ConfigName: "retention.ms", ConfigValue: "86400000"}}}}})
	if err != nil || created.Errors[topic] != nil {
		t.Fatalf("create: %v %v", err, created.Errors[topic])
	}
	dup, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}}})
	if err != nil || !errors.Is(dup.Errors[topic], kafka.TopicAlreadyExists) {
		t.Errorf("duplicate create: %v %v, want %v", err, dup.Errors[topic], kafka.TopicAlreadyExists)
	}
	added, err := cl.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{Topics: []kafka.TopicPartitionsConfig{{Name: topic, Count: 4}}})
	if err != nil || added.Errors[topic] != nil {
		t.Fatalf("create partitions: %v %v", err, added.Errors[topic])
	}
	waitFor(t, 20*time.Second, "4 partitions", func() bool {
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		return err == nil && len(md.Topics) == 1 && len(md.Topics[0].Partitions) == 4
	})
	retentionOf := func() string {
		resp, err := cl.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
			ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ConfigNames: []string{"retention.ms"}}}})
		if err != nil || len(resp.Resources) != 1 || resp.Resources[0].Error != nil {
			t.Fatalf("describe configs: %v %+v", err, resp)
		}
		for _, e := range resp.Resources[0].ConfigEntries {
			if e.ConfigName == "retention.ms" {
				return e.ConfigValue
			}
		}
		t.Fatalf("no retention.ms in %+v", resp.Resources[0].ConfigEntries)
		return ""
	}
	if got := retentionOf(); got != "86400000" {
		t.Errorf("retention.ms after create %q, want 86400000", got)
	}
	altered, err := cl.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: "retention.ms", Value: "3600000", ConfigOperation: kafka.ConfigOperationSet}}}}})
	if err != nil || len(altered.Resources) != 1 || altered.Resources[0].Error != nil {
		t.Fatalf("alter configs: %v %+v", err, altered)
	}
	if got := retentionOf(); got != "3600000" {
		t.Errorf("retention.ms after alter %q, want 3600000", got)
	}
	deleted, err := cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err != nil || deleted.Errors[topic] != nil {
		t.Fatalf("delete: %v %v", err, deleted.Errors[topic])
	}
	waitFor(t, 20*time.Second, topic+" no longer listed", func() bool {
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{})
		return err == nil && !slices.ContainsFunc(md.Topics, func(tp kafka.Topic) bool { return tp.Name == topic })
	})
}
