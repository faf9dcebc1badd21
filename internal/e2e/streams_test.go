package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const streamsLibDir = "e2e/streams/lib"

var streamsJar = regexp.MustCompile(`^kafka-streams-(.+)\.jar$`)

// streamsFamily is Kafka Streams from Maven Central (e2e/streams/pom.xml), run with Java's
// single-file launcher.
var streamsFamily = Family{Name: "kafka-streams", Detect: sync.OnceValues(func() (string, string) {
	if _, err := exec.LookPath("java"); err != nil {
		return "", "java not in PATH"
	}
	entries, _ := os.ReadDir(rootPath(streamsLibDir))
	for _, e := range entries {
		if m := streamsJar.FindStringSubmatch(e.Name()); m != nil {
			return "Apache Kafka Streams " + m[1], ""
		}
	}
	return "", "no kafka-streams jar in " + streamsLibDir
})}

// TestKafkaStreams runs Kafka Streams applications against the gateway.
func TestKafkaStreams(t *testing.T) {
	runScenarios(t, streamsFamily, []Scenario{
		{Name: "word-count", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets, FeatureConfigs},
			Run: streamsWordCount},
	})
}

// streamsApp is a running e2e/streams/WordCount.java.
type streamsApp struct {
	cmd     *exec.Cmd
	running chan struct{} // closed when it reports RUNNING
	done    chan error
}

func startWordCount(t *testing.T, env *Env, appID, input, output string) *streamsApp {
	t.Helper()
	cmd := exec.Command("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-cp", filepath.Join(rootPath(streamsLibDir), "*"), rootPath("e2e/streams/WordCount.java"),
		env.Bootstrap, appID, input, output, t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	app := &streamsApp{cmd: cmd, running: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		sc, once := bufio.NewScanner(stdout), sync.Once{}
		for sc.Scan() {
			if sc.Text() == "STATE RUNNING" {
				once.Do(func() { close(app.running) })
			}
		}
		app.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		app.stop()
		if t.Failed() {
			t.Logf("Kafka Streams stderr:\n%s", stderr.String())
		}
	})
	return app
}

// stop closes the application (SIGTERM runs KafkaStreams.close) and waits for it.
func (a *streamsApp) stop() {
	if a.cmd.ProcessState != nil || a.cmd.Process == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(30 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
	}
}

// waitCounts reads the output topic from the start until the latest count of every word is
// want (a word's count is only ever raised, so reading on is safe).
func waitCounts(t *testing.T, env *Env, output string, want map[string]int64) {
	t.Helper()
	cl := env.Kgo(t, kgo.ConsumeTopics(output), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	got := map[string]int64{}
	for !equalCounts(got, want) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("counts %v, want %v", got, want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if len(r.Value) == 8 {
				got[string(r.Key)] = int64(beUint64(r.Value))
			}
		})
	}
}

func beUint64(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// streamsWordCount: Streams creates its repartition and changelog topics (with the configs it
// asks for), counts correctly, purges the repartition topic with DeleteRecords, and a
// restarted application (fresh state directory) restores its store from the changelog.
func streamsWordCount(t *testing.T, env *Env) {
	input, output := TopicName(t)+"-in", TopicName(t)+"-out"
	appID := strings.TrimPrefix(TopicName(t), "e2e-")
	adm := env.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, topic := range []string{input, output} {
		if resp, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil || resp.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, resp.Err)
		}
	}
	produce := func(lines ...string) {
		t.Helper()
		cl := env.Kgo(t)
		for i, l := range lines {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: input, Key: []byte(strconv.Itoa(i)), Value: []byte(l)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce("the quick brown fox", "the lazy dog", "The fox")
	app := startWordCount(t, env, appID, input, output)
	select {
	case <-app.running:
	case err := <-app.done:
		t.Fatalf("Kafka Streams exited: %v", err)
	case <-ctx.Done():
		t.Fatal("Kafka Streams not RUNNING")
	}
	waitCounts(t, env, output, map[string]int64{"the": 3, "quick": 1, "brown": 1, "fox": 2, "lazy": 1, "dog": 1})

	// Streams created its internal topics with its configs, reported back as asked.
	repartition, changelog := appID+"-counts-repartition", appID+"-counts-changelog"
	checkCleanupPolicy(ctx, t, adm, map[string]string{changelog: "compact", repartition: "delete"})
	// The repartition topic is purged up to what was processed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		starts, err := adm.ListStartOffsets(ctx, repartition)
		purged := int64(0)
		starts.Each(func(o kadm.ListedOffset) { purged += o.Offset })
		if err == nil && purged > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("repartition topic never purged: %v %v", starts, err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Restart with an empty state directory: the counts continue from the changelog.
	app.stop()
	produce("the end")
	app = startWordCount(t, env, appID, input, output)
	waitCounts(t, env, output, map[string]int64{"the": 4, "quick": 1, "brown": 1, "fox": 2, "lazy": 1, "dog": 1, "end": 1})
	app.stop()
}
