package e2e

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkajs runs kafkajs (npm) against the gateway through e2e/node/kafka_client.js, which
// prints what the client saw as JSON. kafkajs has no lz4 or zstd codec of its own; the report
// says so.
func TestKafkajs(t *testing.T) { runScenarios(t, kafkajsFamily, kafkajsScenarios()) }

// kafkajsScenarios are kafkajs's scenarios (the Iggy cluster test runs some of them too).
func kafkajsScenarios() []Scenario {
	scenarios := []Scenario{
		{Name: "metadata", Needs: []Feature{FeatureCore}, Covers: []Cell{CellMetadata}, Run: kafkajsMetadata},
	}
	for _, c := range codecs[:3] { // none, gzip, snappy
		scenarios = append(scenarios, Scenario{Name: "produce-" + c.name,
			Needs: []Feature{FeatureCore, FeatureProduce, c.need, FeatureFetch}, Covers: []Cell{c.cell, CellIdempotence}, Run: kafkajsProduce(c.name)})
	}
	scenarios = append(scenarios,
		Scenario{Name: "group-consume", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets},
			Covers: []Cell{CellConsume, CellGroups, CellOffsets}, Run: kafkajsGroupConsume},
		Scenario{Name: "admin", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureCreatePartitions, FeatureDeleteTopics, FeatureConfigs},
			Covers: []Cell{CellAdminTopics, CellConfigs}, Run: kafkajsAdmin},
	)
	return scenarios
}

func kafkajsMetadata(t *testing.T, env *Env) {
	one, three := env.CreateTopic(t, 1), env.CreateTopic(t, 3)
	var md scriptMetadata
	kafkajsScript.run(t, env, nil, &md, "metadata", "--topics", one, "--topics", three)
	md.check(t, env, map[string]int{one: 1, three: 3})
}

// kafkajsProduce produces the timed sample with kafkajs's idempotent producer and reads it
// back with franz-go, so the produce path is checked without depending on kafkajs groups.
func kafkajsProduce(codec string) func(t *testing.T, env *Env) {
	return func(t *testing.T, env *Env) {
		topic := env.CreateTopic(t, 1)
		want := timedSampleRecords()
		var out struct {
			BaseOffsets []int64 `json:"base_offsets"`
		}
		kafkajsScript.run(t, env, want, &out, "produce", "--topic", topic, "--codec", codec)
		if !slices.Equal(out.BaseOffsets, []int64{0}) {
			t.Errorf("produce acknowledged base offsets %v, want [0]", out.BaseOffsets)
		}
		cl := env.Kgo(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
		var got []Rec
		for _, r := range pollN(t, ctxFor(t, 30*time.Second), cl, len(want)) {
			got = append(got, kgoRec(r))
		}
		checkRecords(t, got, want, 0, timeWindow{})
	}
}

func kgoRec(r *kgo.Record) Rec {
	rec := Rec{Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli()}
	if r.Key != nil {
		rec.Key = ptr(string(r.Key))
	}
	if r.Value != nil {
		rec.Value = ptr(string(r.Value))
	}
	for _, h := range r.Headers {
		rec.Headers = append(rec.Headers, [2]string{h.Key, string(h.Value)})
	}
	return rec
}

// kafkajsGroupConsume: records produced by franz-go are read by a kafkajs group consumer
// that commits after each; the committed offsets come back through kafkajs's admin client.
func kafkajsGroupConsume(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 1)
	want := timedSampleRecords()
	var recs []*kgo.Record
	for _, r := range want {
		kr := &kgo.Record{Topic: topic, Timestamp: time.UnixMilli(r.Timestamp)}
		if r.Key != nil {
			kr.Key = []byte(*r.Key)
		}
		if r.Value != nil {
			kr.Value = []byte(*r.Value)
		}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
		}
		recs = append(recs, kr)
	}
	if err := env.Kgo(t).ProduceSync(ctxFor(t, 30*time.Second), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Records   []Rec            `json:"records"`
		Committed map[string]int64 `json:"committed"`
	}
	kafkajsScript.run(t, env, nil, &out, "group-consume", "--topic", topic, "--group", "g-"+topic, "--count", strconv.Itoa(len(want)))
	checkRecords(t, out.Records, want, 0, timeWindow{})
	if out.Committed["0"] != int64(len(want)) {
		t.Errorf("committed offsets %v, want %d on partition 0", out.Committed, len(want))
	}
}

func kafkajsAdmin(t *testing.T, env *Env) {
	var out struct {
		scriptAdmin
		Created      bool `json:"created"`
		CreatedAgain bool `json:"created_again"`
	}
	kafkajsScript.run(t, env, nil, &out, "admin", "--topic", TopicName(t))
	if !out.Created || out.CreatedAgain {
		t.Errorf("createTopics returned %v, then %v for the same topic; want true, then false (already exists)", out.Created, out.CreatedAgain)
	}
	out.check(t)
}
