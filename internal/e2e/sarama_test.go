package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestSarama runs IBM/sarama against the gateway.
func TestSarama(t *testing.T) { runScenarios(t, saramaFamily, saramaScenarios()) }

// saramaScenarios are sarama's scenarios (the Iggy cluster test runs some of them too).
func saramaScenarios() []Scenario {
	scenarios := []Scenario{
		{Name: "metadata", Needs: []Feature{FeatureCore}, Covers: []Cell{CellMetadata}, Run: saramaMetadata},
	}
	for _, c := range codecs {
		covers := []Cell{c.cell, CellIdempotence}
		if c.name == "none" {
			covers = append(covers, CellConsume)
		}
		scenarios = append(scenarios, Scenario{Name: "produce-consume-" + c.name,
			Needs: []Feature{FeatureCore, FeatureProduce, c.need, FeatureFetch, FeatureListOffsets}, Covers: covers, Run: saramaProduceConsume(c.name)})
	}
	scenarios = append(scenarios,
		Scenario{Name: "group", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets},
			Covers: []Cell{CellGroups, CellOffsets}, Run: saramaGroup},
		Scenario{Name: "admin", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureCreatePartitions, FeatureDeleteTopics, FeatureConfigs},
			Covers: []Cell{CellAdminTopics, CellConfigs}, Run: saramaAdmin},
	)
	return scenarios
}

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_0_0_0
	cfg.ClientID = "iggygw-e2e-sarama"
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	return cfg
}

func saramaClient(t *testing.T, env *Env, cfg *sarama.Config) sarama.Client {
	t.Helper()
	cl, err := sarama.NewClient([]string{env.Bootstrap}, cfg)
	if err != nil {
		t.Fatalf("sarama client: %v", err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func saramaMetadata(t *testing.T, env *Env) {
	one, three := env.CreateTopic(t, 1), env.CreateTopic(t, 3)
	cl := saramaClient(t, env, saramaConfig())
	brokers := cl.Brokers()
	if len(brokers) != 1 || brokers[0].ID() != 1 || brokers[0].Addr() != env.Bootstrap {
		t.Errorf("brokers %v, want broker 1 at %s", brokers, env.Bootstrap)
	}
	for name, want := range map[string]int{one: 1, three: 3} {
		parts, err := cl.Partitions(name)
		if err != nil || !slices.Equal(parts, []int32{0, 1, 2}[:want]) {
			t.Errorf("partitions of %s: %v (%v), want %d", name, parts, err, want)
		}
		for _, p := range parts {
			if leader, err := cl.Leader(name, p); err != nil || leader.ID() != 1 {
				t.Errorf("leader of %s/%d: %v (%v), want broker 1", name, p, leader, err)
			}
		}
	}
}

func saramaProduceConsume(codec string) func(t *testing.T, env *Env) {
	return func(t *testing.T, env *Env) {
		topic := env.CreateTopic(t, 1)
		cfg := saramaConfig()
		cfg.Producer.Return.Successes = true
		cfg.Producer.Partitioner = sarama.NewManualPartitioner
		cfg.Producer.Idempotent = true
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		cfg.Net.MaxOpenRequests = 1
		cfg.Producer.Compression = map[string]sarama.CompressionCodec{"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
			"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD}[codec]
		cl := saramaClient(t, env, cfg)
		producer, err := sarama.NewSyncProducerFromClient(cl)
		if err != nil {
			t.Fatal(err)
		}
		defer producer.Close()
		want := timedSampleRecords()
		var msgs []*sarama.ProducerMessage
		for _, r := range want {
			m := &sarama.ProducerMessage{Topic: topic, Partition: 0, Timestamp: time.UnixMilli(r.Timestamp)}
			if r.Key != nil {
				m.Key = sarama.StringEncoder(*r.Key)
			}
			if r.Value != nil {
				m.Value = sarama.StringEncoder(*r.Value)
			}
			for _, h := range r.Headers {
				m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h[0]), Value: []byte(h[1])})
			}
			msgs = append(msgs, m)
		}
		if err := producer.SendMessages(msgs); err != nil {
			t.Fatalf("send: %v", err)
		}
		for i, m := range msgs {
			if m.Offset != int64(i) {
				t.Errorf("message %d acknowledged at offset %d", i, m.Offset)
			}
		}
		consumer, err := sarama.NewConsumerFromClient(cl)
		if err != nil {
			t.Fatal(err)
		}
		defer consumer.Close()
		pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		var got []Rec
		timeout := time.After(30 * time.Second)
		for len(got) < len(want) {
			select {
			case m := <-pc.Messages():
				got = append(got, saramaRec(m))
			case err := <-pc.Errors():
				t.Fatalf("consume: %v", err)
			case <-timeout:
				t.Fatalf("read %d of %d records", len(got), len(want))
			}
		}
		checkRecords(t, got, want, 0, timeWindow{})
	}
}

func saramaRec(m *sarama.ConsumerMessage) Rec {
	r := Rec{Partition: m.Partition, Offset: m.Offset, Timestamp: m.Timestamp.UnixMilli()}
	if m.Key != nil {
		r.Key = ptr(string(m.Key))
	}
	if m.Value != nil {
		r.Value = ptr(string(m.Value))
	}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, [2]string{string(h.Key), string(h.Value)})
	}
	return r
}

// saramaHandler collects records and marks them consumed until want are in.
type saramaHandler struct {
	mu   sync.Mutex
	got  []string
	want int
	done chan struct{}
	once sync.Once
}

func (h *saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		s.MarkMessage(m, "")
		h.mu.Lock()
		h.got = append(h.got, fmt.Sprintf("%d/%d %s", m.Partition, m.Offset, m.Value))
		if len(h.got) == h.want {
			s.Commit()
			h.once.Do(func() { close(h.done) })
		}
		h.mu.Unlock()
	}
	return nil
}

func saramaGroup(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 2)
	group := "g-" + topic
	cfg := saramaConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cl := saramaClient(t, env, cfg)
	producer, err := sarama.NewSyncProducerFromClient(cl)
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	var want []string
	for p := int32(0); p < 2; p++ {
		for i := 0; i < 2; i++ {
			v := fmt.Sprintf("v%d-%d", p, i)
			if err := producer.SendMessages([]*sarama.ProducerMessage{{Topic: topic, Partition: p, Value: sarama.StringEncoder(v)}}); err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprintf("%d/%d %s", p, i, v))
		}
	}
	cg, err := sarama.NewConsumerGroupFromClient(group, cl)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	h := &saramaHandler{want: len(want), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, h); err != nil && ctx.Err() == nil {
				t.Errorf("consume: %v", err)
				return
			}
		}
	}()
	select {
	case <-h.done:
	case <-ctx.Done():
		t.Fatalf("group read %v before the timeout, want %v", h.got, want)
	}
	h.mu.Lock()
	got := slices.Clone(h.got)
	h.mu.Unlock()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("group read %v, want %v", got, want)
	}
	adm, err := sarama.NewClusterAdminFromClient(cl)
	if err != nil {
		t.Fatal(err)
	}
	offsets, err := adm.ListConsumerGroupOffsets(group, map[string][]int32{topic: {0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 2; p++ {
		if b := offsets.GetBlock(topic, p); b == nil || b.Err != sarama.ErrNoError || b.Offset != 2 {
			t.Errorf("committed offset of partition %d: %+v, want 2", p, b)
		}
	}
}

func saramaAdmin(t *testing.T, env *Env) {
	topic := TopicName(t)
	cl := saramaClient(t, env, saramaConfig())
	adm, err := sarama.NewClusterAdminFromClient(cl)
	if err != nil {
		t.Fatal(err)
	}
	retention := "86400000"
	if err := adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1,
		ConfigEntries: map[string]*string{"retention.ms": &retention}}, false); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err == nil {
		t.Error("duplicate create succeeded, want TOPIC_ALREADY_EXISTS")
	}
	if err := adm.CreatePartitions(topic, 4, nil, false); err != nil {
		t.Fatalf("create partitions: %v", err)
	}
	waitFor(t, 20*time.Second, "4 partitions", func() bool {
		md, err := adm.DescribeTopics([]string{topic})
		return err == nil && len(md) == 1 && len(md[0].Partitions) == 4
	})
	retentionOf := func() string {
		results, err := adm.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: topic}}, sarama.DescribeConfigsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(results) != 1 || results[0].ErrorCode != sarama.ErrNoError {
			t.Fatalf("describe configs of %s: %+v", topic, results)
		}
		entries := results[0].Configs
		for _, e := range entries {
			if e.Name == "retention.ms" {
				return e.Value
			}
		}
		t.Fatalf("no retention.ms in %+v", entries)
		return ""
	}
	if got := retentionOf(); got != retention {
		t.Errorf("retention.ms after create %q, want %q", got, retention)
	}
	hour := "3600000"
	if err := adm.IncrementalAlterConfig(sarama.TopicResource, topic, map[string]sarama.IncrementalAlterConfigsEntry{
		"retention.ms": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &hour}}, false); err != nil {
		t.Fatalf("alter: %v", err)
	}
	if got := retentionOf(); got != hour {
		t.Errorf("retention.ms after alter %q, want %q", got, hour)
	}
	if err := adm.DeleteTopic(topic); err != nil {
		t.Fatalf("delete: %v", err)
	}
	waitFor(t, 20*time.Second, topic+" no longer listed", func() bool {
		topics, err := adm.ListTopics()
		_, listed := topics[topic]
		return err == nil && !listed
	})
}
