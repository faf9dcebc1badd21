package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// pyFrameworksVenv is the virtualenv of the Python frameworks (e2e/python/
// frameworks-requirements.txt): apart from the clients' one, whose confluent-kafka is newer
// than quixstreams accepts.
const pyFrameworksVenv = ".cache/venv-frameworks"

func pyFrameworksBin() string { return filepath.Join(rootPath(pyFrameworksVenv), "bin", "python") }

var pyFrameworksScript = scriptClient{interpreter: pyFrameworksBin, script: pythonDir + "/frameworks.py"}

// pyFrameworkFamily is the PyPI distribution dist in the frameworks' virtualenv.
func pyFrameworkFamily(dist string) Family {
	return Family{Name: dist, Detect: sync.OnceValues(func() (string, string) {
		if _, err := os.Stat(pyFrameworksBin()); err != nil {
			return "", "no virtualenv at " + pyFrameworksVenv
		}
		out, err := exec.Command(pyFrameworksBin(), "-c", "import importlib.metadata as m; print(m.version('"+dist+"'))").CombinedOutput()
		if err != nil {
			return "", dist + " not installed in " + pyFrameworksVenv + ": " + strings.TrimSpace(string(out))
		}
		return dist + " " + strings.TrimSpace(string(out)), ""
	})}
}

// TestAiokafka runs aiokafka's asyncio producer and group consumer against the gateway.
func TestAiokafka(t *testing.T) {
	runScenarios(t, pyFrameworkFamily("aiokafka"), []Scenario{
		{Name: "produce-group-consume-commit", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets},
			Run: aiokafkaGroup},
	})
}

// TestQuixStreams runs a quixstreams stateful application against the gateway.
func TestQuixStreams(t *testing.T) {
	runScenarios(t, pyFrameworkFamily("quixstreams"), []Scenario{
		{Name: "stateful-word-count-changelog", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets, FeatureConfigs},
			Run: quixWordCount},
	})
}

// aiokafkaGroup: an idempotent asyncio producer gets consecutive offsets per partition; a
// group consumer reads and commits them; after more records a new consumer of the group
// reads only those, from the committed offsets.
func aiokafkaGroup(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 2)
	type rec struct {
		Partition int32  `json:"partition"`
		Offset    int64  `json:"offset"`
		Key       string `json:"key"`
		Value     string `json:"value"`
	}
	var out struct {
		Produced        [][2]int64       `json:"produced"`
		First           []rec            `json:"first"`
		FirstCommitted  map[string]int64 `json:"first_committed"`
		Second          []rec            `json:"second"`
		SecondCommitted map[string]int64 `json:"second_committed"`
	}
	const first, second = 6, 4
	pyFrameworksScript.run(t, env, nil, &out, "aiokafka", "--topic", topic, "--group", topic+"-group",
		"--first", fmt.Sprint(first), "--second", fmt.Sprint(second))
	next := map[int64]int64{}
	for i, po := range out.Produced {
		if po[1] != next[po[0]] {
			t.Errorf("record %d produced at %d/%d, want offset %d", i, po[0], po[1], next[po[0]])
		}
		next[po[0]]++
	}
	check := func(name string, got []rec, from, n int, committed map[string]int64) {
		t.Helper()
		sort.Slice(got, func(i, j int) bool { return got[i].Key < got[j].Key })
		if len(got) != n {
			t.Fatalf("%s consumer read %d records, want %d: %v", name, len(got), n, got)
		}
		for i, r := range got {
			want := fmt.Sprintf("%s-k%d", name, i)
			if r.Key != want || r.Value != fmt.Sprintf("%s-v%d", name, i) || r.Partition != int32(i%2) || r.Offset != int64(from+i/2) {
				t.Errorf("%s consumer read %+v, want key %s at %d/%d", name, r, want, i%2, from+i/2)
			}
		}
		for p := range 2 {
			if c := committed[fmt.Sprint(p)]; c != int64(from+n/2) {
				t.Errorf("%s consumer committed %d on partition %d, want %d", name, c, p, from+n/2)
			}
		}
	}
	// Keys sort as strings: first-k0..k5 and second-k0..k3 stay in numeric order.
	check("first", out.First, 0, first, out.FirstCommitted)
	check("second", out.Second, first/2, second, out.SecondCommitted)
}

// quixWordCount: a quixstreams application creates its repartition and changelog topics,
// counts words with RocksDB state; run again with a fresh state directory, it recovers the
// counts from the changelog and goes on from them.
func quixWordCount(t *testing.T, env *Env) {
	input, output := TopicName(t)+"-in", TopicName(t)+"-out"
	group := strings.TrimPrefix(input, "e2e-")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := env.Admin(t)
	for _, topic := range []string{input, output} {
		if resp, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil || resp.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, resp.Err)
		}
	}
	produceLines(ctx, t, env, input, "the quick brown fox", "the lazy dog", "The fox")
	type count struct {
		Word  string `json:"word"`
		Count int    `json:"count"`
	}
	run := func(outputs int) map[string]int {
		t.Helper()
		var out struct {
			Outputs []count `json:"outputs"`
		}
		pyFrameworksScript.run(t, env, nil, &out, "quix-count", "--group", group, "--topic", input, "--output", output,
			"--state-dir", t.TempDir(), "--outputs", fmt.Sprint(outputs))
		latest := map[string]int{}
		for _, c := range out.Outputs {
			latest[c.Word] = c.Count
		}
		return latest
	}
	if got, want := run(9), map[string]int{"the": 3, "quick": 1, "brown": 1, "fox": 2, "lazy": 1, "dog": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
	// quixstreams created its internal topics: a changelog per stateful step.
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var changelogs []string
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, "changelog__"+group) {
			changelogs = append(changelogs, name)
		}
	}
	if len(changelogs) == 0 {
		t.Fatalf("no changelog topic for group %s in %v", group, topics.Names())
	}
	compacted := map[string]string{}
	for _, name := range changelogs {
		compacted[name] = "compact"
	}
	checkCleanupPolicy(ctx, t, adm, compacted)
	if n := topicRecords(ctx, t, adm, changelogs[len(changelogs)-1]); n == 0 {
		t.Errorf("changelog %s is empty", changelogs[len(changelogs)-1])
	}

	// A fresh state directory: the counts come back from the changelog.
	produceLines(ctx, t, env, input, "the end")
	if got, want := run(2), map[string]int{"the": 4, "end": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("counts after recovery %v, want %v", got, want)
	}
}

// produceLines produces each line as a record (keyed by its index) to topic.
func produceLines(ctx context.Context, t *testing.T, env *Env, topic string, lines ...string) {
	t.Helper()
	cl := env.Kgo(t)
	for i, l := range lines {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(i)), Value: []byte(l)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}
