package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestKcat runs kcat (librdkafka, Debian package) against the gateway.
func TestKcat(t *testing.T) { runScenarios(t, kcatFamily, kcatScenarios()) }

// kcatScenarios are kcat's scenarios (the Iggy cluster test runs some of them too).
func kcatScenarios() []Scenario {
	scenarios := []Scenario{
		{Name: "metadata", Needs: []Feature{FeatureCore}, Covers: []Cell{CellMetadata}, Run: kcatMetadata},
	}
	for _, c := range codecs {
		covers := []Cell{c.cell}
		if c.name == "none" {
			covers = append(covers, CellConsume)
		}
		scenarios = append(scenarios, Scenario{Name: "produce-consume-" + c.name,
			Needs: []Feature{FeatureCore, FeatureProduce, c.need, FeatureFetch, FeatureListOffsets}, Covers: covers, Run: kcatProduceConsume(c.name)})
	}
	scenarios = append(scenarios, Scenario{Name: "group", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets},
		Covers: []Cell{CellGroups, CellOffsets}, Run: kcatGroup})
	return scenarios
}

func kcat(t *testing.T, stdin string, args ...string) CmdResult {
	t.Helper()
	return mustRun(t, Cmd{Name: "kcat", Args: args, Stdin: stdin, Timeout: 60 * time.Second})
}

// kcatMetadataJSON is the part of kcat -L -J output the metadata scenario checks.
type kcatMetadataJSON struct {
	Brokers []struct {
		ID   int32  `json:"id"`
		Name string `json:"name"`
	} `json:"brokers"`
	Topics []kcatTopicJSON `json:"topics"`
}

type kcatTopicJSON struct {
	Topic      string `json:"topic"`
	Partitions []struct {
		Partition int32 `json:"partition"`
		Leader    int32 `json:"leader"`
	} `json:"partitions"`
}

// kcatMetadata: kcat -L (text and JSON) shows this broker and natively created topics with
// their partitions led by broker 1.
func kcatMetadata(t *testing.T, env *Env) {
	one, three := env.CreateTopic(t, 1), env.CreateTopic(t, 3)
	res := kcat(t, "", "-b", env.Bootstrap, "-L")
	if !strings.Contains(res.Stdout, "broker 1 at "+env.Bootstrap) {
		t.Errorf("kcat -L does not show broker 1 at %s:\n%s", env.Bootstrap, res.Stdout)
	}
	res = kcat(t, "", "-b", env.Bootstrap, "-L", "-J")
	var md kcatMetadataJSON
	if err := json.Unmarshal([]byte(res.Stdout), &md); err != nil {
		t.Fatalf("kcat -L -J output is not JSON: %v\n%s", err, res.Stdout)
	}
	if len(md.Brokers) != 1 || md.Brokers[0].ID != 1 || md.Brokers[0].Name != env.Bootstrap {
		t.Errorf("brokers %+v, want [{1 %s}]", md.Brokers, env.Bootstrap)
	}
	for name, want := range map[string]int{one: 1, three: 3} {
		i := slices.IndexFunc(md.Topics, func(tp kcatTopicJSON) bool { return tp.Topic == name })
		if i < 0 {
			t.Errorf("topic %s missing from kcat -L -J", name)
			continue
		}
		parts := md.Topics[i].Partitions
		if len(parts) != want {
			t.Errorf("topic %s has %d partitions, want %d", name, len(parts), want)
		}
		for _, p := range parts {
			if p.Leader != 1 {
				t.Errorf("topic %s partition %d led by %d, want 1", name, p.Partition, p.Leader)
			}
		}
	}
}

// kcatFormat prints every field a scenario checks; value last since it may hold spaces.
const kcatFormat = `%p\t%o\t%T\t%K\t%k\t%h\t%s\n`

func parseKcat(t *testing.T, out string) []Rec {
	var recs []Rec
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 7)
		if len(f) != 7 {
			t.Fatalf("unexpected kcat line %q", line)
		}
		var r Rec
		p, _ := strconv.ParseInt(f[0], 10, 32)
		r.Partition = int32(p)
		r.Offset, _ = strconv.ParseInt(f[1], 10, 64)
		r.Timestamp, _ = strconv.ParseInt(f[2], 10, 64)
		if f[3] != "-1" {
			r.Key = ptr(f[4])
		}
		if f[5] != "" {
			for _, kv := range strings.Split(f[5], ",") {
				k, v, _ := strings.Cut(kv, "=")
				r.Headers = append(r.Headers, [2]string{k, v})
			}
		}
		r.Value = ptr(f[6])
		recs = append(recs, r)
	}
	return recs
}

// kcatProduceConsume produces sampleRecords one kcat run each (headers are per run), then a
// batch of five records in one run, all with codec, and reads everything back with -C -e.
func kcatProduceConsume(codec string) func(t *testing.T, env *Env) {
	return func(t *testing.T, env *Env) {
		topic := env.CreateTopic(t, 1)
		want := sampleRecords()
		start := time.Now()
		for _, r := range want {
			args := []string{"-b", env.Bootstrap, "-t", topic, "-p", "0", "-P", "-z", codec, "-K", "|"}
			for _, h := range r.Headers {
				args = append(args, "-H", h[0]+"="+h[1])
			}
			line := *r.Value
			if r.Key != nil {
				line = *r.Key + "|" + line
			}
			kcat(t, line+"\n", args...)
		}
		var batch strings.Builder
		for i := 0; i < 5; i++ {
			k, v := fmt.Sprintf("bk%d", i), fmt.Sprintf("batch value %d", i)
			batch.WriteString(k + "|" + v + "\n")
			want = append(want, Rec{Key: ptr(k), Value: ptr(v), Headers: [][2]string{{"batch", codec}}})
		}
		kcat(t, batch.String(), "-b", env.Bootstrap, "-t", topic, "-p", "0", "-P", "-z", codec, "-K", "|", "-H", "batch="+codec)
		win := windowAround(start)
		res := kcat(t, "", "-b", env.Bootstrap, "-t", topic, "-p", "0", "-C", "-o", "beginning", "-e", "-f", kcatFormat)
		checkRecords(t, parseKcat(t, res.Stdout), want, 0, win)
	}
}

// kcatGroup: kcat -G reads a two-partition topic through a consumer group and commits; the
// committed offsets are visible through the Kafka admin API, and a second run of the same
// group reads nothing more.
func kcatGroup(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 2)
	group := "g-" + topic
	for p, values := range [][]string{{"p0-a", "p0-b"}, {"p1-a", "p1-b"}} {
		kcat(t, strings.Join(values, "\n")+"\n", "-b", env.Bootstrap, "-t", topic, "-p", strconv.Itoa(p), "-P")
	}
	// -o would override the committed offsets; a new group starts at the beginning through
	// auto.offset.reset instead.
	args := []string{"-b", env.Bootstrap, "-G", group, "-X", "auto.offset.reset=earliest", "-e", "-f", `%p %o %s\n`, topic}
	res := kcat(t, "", args...)
	got := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	slices.Sort(got)
	if want := []string{"0 0 p0-a", "0 1 p0-b", "1 0 p1-a", "1 1 p1-b"}; !slices.Equal(got, want) {
		t.Fatalf("kcat -G read %q, want %q", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	offsets, err := env.Admin(t).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	for p := int32(0); p < 2; p++ {
		o, ok := offsets.Lookup(topic, p)
		if !ok || o.Err != nil || o.At != 2 {
			t.Errorf("committed offset of %s/%d: %+v (found %v), want 2", topic, p, o, ok)
		}
	}
	res = kcat(t, "", args...)
	if strings.TrimSpace(res.Stdout) != "" {
		t.Errorf("second run of group %s read %q, want nothing after its commits", group, res.Stdout)
	}
}
