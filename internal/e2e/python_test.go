package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestPython runs confluent-kafka (librdkafka, PyPI wheel) against the gateway through
// e2e/python/kafka_client.py, which prints what the client saw as JSON.
func TestPython(t *testing.T) { runScenarios(t, pythonFamily, pythonScenarios(pythonScript)) }

// TestKafkaPython runs kafka-python (pure Python, its own protocol code) through the same
// scenarios with e2e/python/kafka_python_client.py, which prints the same JSON.
func TestKafkaPython(t *testing.T) {
	runScenarios(t, kafkaPythonFamily, pythonScenarios(kafkaPythonScript))
}

// pythonScenarios are the scenarios of the Python client scripts, run with script.
func pythonScenarios(script scriptClient) []Scenario {
	scenarios := []Scenario{
		{Name: "metadata", Needs: []Feature{FeatureCore}, Covers: []Cell{CellMetadata}, Run: pythonMetadata(script)},
	}
	for _, c := range codecs {
		covers := []Cell{c.cell, CellIdempotence}
		if c.name == "none" {
			covers = append(covers, CellConsume)
		}
		scenarios = append(scenarios, Scenario{Name: "produce-consume-" + c.name,
			Needs: []Feature{FeatureCore, FeatureProduce, c.need, FeatureFetch}, Covers: covers, Run: pythonProduceConsume(script, c.name)})
	}
	return append(scenarios,
		Scenario{Name: "group", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets},
			Covers: []Cell{CellGroups, CellOffsets}, Run: pythonGroup(script)},
		Scenario{Name: "admin", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureCreatePartitions, FeatureDeleteTopics, FeatureConfigs},
			Covers: []Cell{CellAdminTopics, CellConfigs}, Run: pythonAdmin(script)},
	)
}

// codecs are the Kafka compression codecs, with the gateway feature and report cell of each.
var codecs = []struct {
	name string
	need Feature
	cell Cell
}{{"none", FeatureProduce, CellProduce}, {"gzip", FeatureGzip, CellGzip}, {"snappy", FeatureSnappy, CellSnappy},
	{"lz4", FeatureLZ4, CellLZ4}, {"zstd", FeatureZstd, CellZstd}}

func pythonMetadata(script scriptClient) func(t *testing.T, env *Env) {
	return func(t *testing.T, env *Env) {
		one, three := env.CreateTopic(t, 1), env.CreateTopic(t, 3)
		var md scriptMetadata
		script.run(t, env, nil, &md, "metadata", "--topics", one, three)
		md.check(t, env, map[string]int{one: 1, three: 3})
	}
}

// timedSampleRecords is sampleRecords with explicit, distinct producer timestamps.
func timedSampleRecords() []Rec {
	recs := sampleRecords()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond).UnixMilli()
	for i := range recs {
		recs[i].Timestamp = base + int64(i)*1000
	}
	return recs
}

func pythonProduceConsume(script scriptClient, codec string) func(t *testing.T, env *Env) {
	return func(t *testing.T, env *Env) {
		topic := env.CreateTopic(t, 1)
		want := timedSampleRecords()
		var out struct {
			ProducedOffsets []int64 `json:"produced_offsets"`
			Records         []Rec   `json:"records"`
		}
		script.run(t, env, want, &out, "produce-consume", "--topic", topic, "--codec", codec)
		if !slices.Equal(out.ProducedOffsets, []int64{0, 1, 2}) {
			t.Errorf("delivery reports gave offsets %v, want [0 1 2]", out.ProducedOffsets)
		}
		checkRecords(t, out.Records, want, 0, timeWindow{})
	}
}

func pythonGroup(script scriptClient) func(t *testing.T, env *Env) { return pythonGroupWith(script) }

// pythonGroupWith is pythonGroup with extra arguments for the script's group command.
func pythonGroupWith(script scriptClient, extra ...string) func(t *testing.T, env *Env) {
	return func(t *testing.T, env *Env) {
		topic := env.CreateTopic(t, 2)
		var recs []Rec
		for p := int32(0); p < 2; p++ {
			for i := 0; i < 2; i++ {
				recs = append(recs, Rec{Partition: p, Key: ptr(fmt.Sprintf("k%d-%d", p, i)), Value: ptr(fmt.Sprintf("v%d-%d", p, i))})
			}
		}
		var out struct {
			Records          []Rec            `json:"records"`
			Committed        map[string]int64 `json:"committed"`
			Reread           []Rec            `json:"reread"`
			SecondAssignment []int32          `json:"second_assignment"`
		}
		script.run(t, env, recs, &out, append([]string{"group", "--topic", topic, "--group", "g-" + topic, "--partitions", "2"}, extra...)...)
		var got []string
		for _, r := range out.Records {
			got = append(got, fmt.Sprintf("%d/%d %s=%s", r.Partition, r.Offset, strp(r.Key), strp(r.Value)))
		}
		slices.Sort(got)
		want := []string{`0/0 "k0-0"="v0-0"`, `0/1 "k0-1"="v0-1"`, `1/0 "k1-0"="v1-0"`, `1/1 "k1-1"="v1-1"`}
		if !slices.Equal(got, want) {
			t.Errorf("group consumer read %q, want %q", got, want)
		}
		if out.Committed["0"] != 2 || out.Committed["1"] != 2 {
			t.Errorf("committed offsets %v, want 2 on both partitions", out.Committed)
		}
		if len(out.Reread) != 0 {
			t.Errorf("a new member of the group re-read %v after the commit", out.Reread)
		}
		if !slices.Equal(out.SecondAssignment, []int32{0, 1}) {
			t.Errorf("second member assigned %v, want [0 1]", out.SecondAssignment)
		}
	}
}

func pythonAdmin(script scriptClient) func(t *testing.T, env *Env) {
	return func(t *testing.T, env *Env) {
		var out struct {
			scriptAdmin
			DuplicateCreateError *string `json:"duplicate_create_error"`
		}
		script.run(t, env, nil, &out, "admin", "--topic", TopicName(t))
		if out.DuplicateCreateError == nil || *out.DuplicateCreateError != "TOPIC_ALREADY_EXISTS" {
			t.Errorf("duplicate create error %v, want TOPIC_ALREADY_EXISTS", strp(out.DuplicateCreateError))
		}
		out.check(t)
	}
}
