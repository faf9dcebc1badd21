package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestPython runs confluent-kafka (librdkafka, PyPI wheel) against the gateway through
// e2e/python/kafka_client.py, which prints what the client saw as JSON.
func TestPython(t *testing.T) {
	scenarios := []Scenario{
		{Name: "metadata", Needs: []Feature{FeatureCore}, Covers: []Cell{CellMetadata}, Run: pythonMetadata},
	}
	for _, c := range codecs {
		covers := []Cell{c.cell, CellIdempotence}
		if c.name == "none" {
			covers = append(covers, CellConsume)
		}
		scenarios = append(scenarios, Scenario{Name: "produce-consume-" + c.name,
			Needs: []Feature{FeatureCore, FeatureProduce, c.need, FeatureFetch}, Covers: covers, Run: pythonProduceConsume(c.name)})
	}
	scenarios = append(scenarios,
		Scenario{Name: "group", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets},
			Covers: []Cell{CellGroups, CellOffsets}, Run: pythonGroup},
		Scenario{Name: "admin", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureCreatePartitions, FeatureDeleteTopics, FeatureConfigs},
			Covers: []Cell{CellAdminTopics, CellConfigs}, Run: pythonAdmin},
	)
	runScenarios(t, pythonFamily, scenarios)
}

// codecs are the Kafka compression codecs, with the gateway feature and report cell of each.
var codecs = []struct {
	name string
	need Feature
	cell Cell
}{{"none", FeatureProduce, CellProduce}, {"gzip", FeatureGzip, CellGzip}, {"snappy", FeatureSnappy, CellSnappy},
	{"lz4", FeatureLZ4, CellLZ4}, {"zstd", FeatureZstd, CellZstd}}

// pythonClient runs one command of kafka_client.py and decodes its JSON output into out.
func pythonClient(t *testing.T, env *Env, stdin any, out any, args ...string) {
	t.Helper()
	var in []byte
	if stdin != nil {
		var err error
		if in, err = json.Marshal(stdin); err != nil {
			t.Fatal(err)
		}
	}
	res := mustRun(t, Cmd{Name: pythonBin(), Args: append([]string{rootPath(pythonDir + "/kafka_client.py"), args[0], "--bootstrap", env.Bootstrap}, args[1:]...),
		Stdin: string(in), Timeout: 90 * time.Second})
	if err := json.Unmarshal([]byte(res.Stdout), out); err != nil {
		t.Fatalf("kafka_client.py %s printed no JSON: %v\n%s\nstderr:\n%s", args[0], err, res.Stdout, res.Stderr)
	}
}

func pythonMetadata(t *testing.T, env *Env) {
	one, three := env.CreateTopic(t, 1), env.CreateTopic(t, 3)
	var md struct {
		Brokers []struct {
			ID   int32  `json:"id"`
			Host string `json:"host"`
			Port int    `json:"port"`
		} `json:"brokers"`
		Topics map[string][]struct {
			Partition int32   `json:"partition"`
			Leader    int32   `json:"leader"`
			Error     *string `json:"error"`
		} `json:"topics"`
	}
	pythonClient(t, env, nil, &md, "metadata", "--topics", one, three)
	if len(md.Brokers) != 1 || md.Brokers[0].ID != 1 || md.Brokers[0].Host+":"+strconv.Itoa(md.Brokers[0].Port) != env.Bootstrap {
		t.Errorf("brokers %+v, want broker 1 at %s", md.Brokers, env.Bootstrap)
	}
	for name, want := range map[string]int{one: 1, three: 3} {
		parts := md.Topics[name]
		if len(parts) != want {
			t.Errorf("topic %s: %d partitions, want %d", name, len(parts), want)
		}
		for i, p := range parts {
			if p.Partition != int32(i) || p.Leader != 1 || p.Error != nil {
				t.Errorf("topic %s partition %+v, want partition %d led by 1 without error", name, p, i)
			}
		}
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

func pythonProduceConsume(codec string) func(t *testing.T, env *Env) {
	return func(t *testing.T, env *Env) {
		topic := env.CreateTopic(t, 1)
		want := timedSampleRecords()
		var out struct {
			ProducedOffsets []int64 `json:"produced_offsets"`
			Records         []Rec   `json:"records"`
		}
		pythonClient(t, env, want, &out, "produce-consume", "--topic", topic, "--codec", codec)
		if !slices.Equal(out.ProducedOffsets, []int64{0, 1, 2}) {
			t.Errorf("delivery reports gave offsets %v, want [0 1 2]", out.ProducedOffsets)
		}
		checkRecords(t, out.Records, want, 0, timeWindow{})
	}
}

func pythonGroup(t *testing.T, env *Env) {
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
	pythonClient(t, env, recs, &out, "group", "--topic", topic, "--group", "g-"+topic, "--partitions", "2")
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

func pythonAdmin(t *testing.T, env *Env) {
	var out struct {
		PartitionsAfterCreate           int     `json:"partitions_after_create"`
		DuplicateCreateError            *string `json:"duplicate_create_error"`
		PartitionsAfterCreatePartitions int     `json:"partitions_after_create_partitions"`
		RetentionMsAtCreate             string  `json:"retention_ms_at_create"`
		RetentionMsAfterAlter           string  `json:"retention_ms_after_alter"`
		ListedAfterDelete               bool    `json:"listed_after_delete"`
	}
	pythonClient(t, env, nil, &out, "admin", "--topic", TopicName(t))
	if out.PartitionsAfterCreate != 2 || out.PartitionsAfterCreatePartitions != 4 {
		t.Errorf("partitions after create %d (want 2), after create_partitions %d (want 4)", out.PartitionsAfterCreate, out.PartitionsAfterCreatePartitions)
	}
	if out.DuplicateCreateError == nil || *out.DuplicateCreateError != "TOPIC_ALREADY_EXISTS" {
		t.Errorf("duplicate create error %v, want TOPIC_ALREADY_EXISTS", strp(out.DuplicateCreateError))
	}
	if out.RetentionMsAtCreate != "86400000" || out.RetentionMsAfterAlter != "3600000" {
		t.Errorf("retention.ms at create %q (want 86400000), after alter %q (want 3600000)", out.RetentionMsAtCreate, out.RetentionMsAfterAlter)
	}
	if out.ListedAfterDelete {
		t.Error("topic still listed after delete_topics")
	}
}
