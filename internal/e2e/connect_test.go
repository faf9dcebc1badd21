package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

const connectLibDir = "e2e/connect/lib"

// connectFamilyOf is a framework of the Kafka Connect set (e2e/connect/pom.xml), detected by
// its jar in e2e/connect/lib.
func connectFamilyOf(name, jarPrefix, title string) Family {
	jar := regexp.MustCompile(`^` + jarPrefix + `-(.+)\.jar$`)
	return Family{Name: name, Detect: sync.OnceValues(func() (string, string) {
		if _, err := exec.LookPath("java"); err != nil {
			return "", "java not in PATH"
		}
		entries, _ := os.ReadDir(rootPath(connectLibDir))
		for _, e := range entries {
			if m := jar.FindStringSubmatch(e.Name()); m != nil {
				return title + " " + m[1], ""
			}
		}
		return "", "no " + jarPrefix + " jar in " + connectLibDir
	})}
}

var connectFamily = connectFamilyOf("kafka-connect", "connect-runtime", "Apache Kafka Connect")

// TestKafkaConnect runs a Kafka Connect worker in distributed mode against the gateway.
func TestKafkaConnect(t *testing.T) {
	runScenarios(t, connectFamily, []Scenario{
		{Name: "file-source-to-sink-distributed", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets, FeatureConfigs},
			Run: connectFilePipeline},
	})
}

// javaProc is a framework JVM (a Connect worker, MirrorMaker 2) run from e2e/connect/lib,
// its output kept in a file and shown when the test fails.
type javaProc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when it has exited; err is then set
	err  error
}

// startConnectJava runs mainClass with args on the e2e/connect/lib classpath until t ends.
func startConnectJava(t *testing.T, name, mainClass string, args ...string) *javaProc {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	out, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmdArgs := append([]string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m",
		"-cp", filepath.Join(rootPath(connectLibDir), "*"), mainClass}, args...)
	cmd := exec.Command("java", cmdArgs...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatal(err)
	}
	p := &javaProc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s output (tail):\n%s", name, tailOf(logPath, 200))
		}
	})
	return p
}

// stop shuts the JVM down (SIGTERM runs its shutdown hooks: Connect stops its tasks and
// commits their offsets) and waits for it.
func (p *javaProc) stop() {
	if dead, _ := p.exited(); dead {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// exited reports whether the JVM has exited, and how.
func (p *javaProc) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// tailOf returns the last n lines of the file at path.
func tailOf(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freeLoopbackPort returns a loopback port free at the time of the call.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// writeProperties writes a Java properties file (keys sorted) into dir and returns its path.
func writeProperties(t *testing.T, dir, name string, props map[string]string) string {
	t.Helper()
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// connectWorker is a Kafka Connect worker in distributed mode with its REST API.
type connectWorker struct {
	*javaProc
	rest string // http://127.0.0.1:port
}

// connectWorkerProps are the settings of a distributed worker of group groupID whose three
// internal topics (created by Connect itself, compacted) are named after it.
func connectWorkerProps(bootstrap, groupID string, restPort int) map[string]string {
	return map[string]string{
		"bootstrap.servers":                       bootstrap,
		"group.id":                                groupID,
		"config.storage.topic":                    groupID + "-configs",
		"offset.storage.topic":                    groupID + "-offsets",
		"status.storage.topic":                    groupID + "-status",
		"config.storage.replication.factor":       "1",
		"offset.storage.replication.factor":       "1",
		"status.storage.replication.factor":       "1",
		"offset.storage.partitions":               "2",
		"status.storage.partitions":               "1",
		"key.converter":                           "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                         "org.apache.kafka.connect.storage.StringConverter",
		"listeners":                               "http://127.0.0.1:" + strconv.Itoa(restPort),
		"rest.advertised.host.name":               "127.0.0.1",
		"offset.flush.interval.ms":                "500",
		"scheduled.rebalance.max.delay.ms":        "0",
		"consumer.max.poll.interval.ms":           "60000",
		"consumer.auto.offset.reset":              "earliest",
		"plugin.discovery":                        "hybrid_warn",
		"task.shutdown.graceful.timeout.ms":       "5000",
		"worker.sync.timeout.ms":                  "3000",
		"metadata.max.age.ms":                     "5000",
		"consumer.metadata.max.age.ms":            "5000",
		"producer.linger.ms":                      "5",
		"connector.client.config.override.policy": "All",
	}
}

// startConnectWorker starts a worker with props (listeners naming its REST port) and waits
// until its REST API answers.
func startConnectWorker(t *testing.T, name string, props map[string]string) *connectWorker {
	t.Helper()
	path := writeProperties(t, t.TempDir(), name+".properties", props)
	w := &connectWorker{
		javaProc: startConnectJava(t, name, "org.apache.kafka.connect.cli.ConnectDistributed", path),
		rest:     strings.TrimSuffix(props["listeners"], "/"),
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		if dead, err := w.exited(); dead {
			t.Fatalf("%s exited: %v", name, err)
		}
		if resp, err := http.Get(w.rest + "/connectors"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return w
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s REST API not up at %s", name, w.rest)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// createConnector creates a connector through the REST API, retrying while the worker is
// still joining its group (409) or forwarding (5xx).
func (w *connectWorker) createConnector(t *testing.T, name string, config map[string]string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "config": config})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Post(w.rest+"/connectors", "application/json", bytes.NewReader(body))
		if err == nil {
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusCreated {
				return
			}
			err = fmt.Errorf("%s: %s", resp.Status, msg)
		}
		if time.Now().After(deadline) {
			t.Fatalf("create connector %s: %v", name, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitFileLines waits until the file at path holds exactly want (a line more fails at once).
func waitFileLines(t *testing.T, path string, want []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var got []string
	for {
		data, _ := os.ReadFile(path)
		got = nil
		if s := strings.TrimSuffix(string(data), "\n"); s != "" {
			got = strings.Split(s, "\n")
		}
		if len(got) > len(want) {
			t.Fatalf("%s has %d lines, want %d (records delivered twice?); first extra: %q", path, len(got), len(want), got[len(want)])
		}
		if len(got) == len(want) && strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d lines, want %d", path, len(got), len(want))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// topicRecords is the number of records in topic (the sum of its partitions' end offsets).
func topicRecords(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) int64 {
	t.Helper()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

func numberedLines(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s line %03d", prefix, i))
	}
	return out
}

func appendLines(t *testing.T, path string, lines []string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// connectFilePipeline: a distributed worker creates its three compacted internal topics, a
// FileStreamSource → topic → FileStreamSink pipeline copies a file exactly, and a restarted
// worker resumes both connectors from their stored offsets (the source from the offsets
// topic, the sink from its group's committed offsets) without sending anything twice.
func connectFilePipeline(t *testing.T, env *Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	topic := TopicName(t)
	group := strings.TrimPrefix(topic, "e2e-")
	adm := env.Admin(t)
	if resp, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, resp.Err)
	}
	first := numberedLines("first", 0, 40)
	appendLines(t, in, first)

	props := connectWorkerProps(env.Bootstrap, group, freeLoopbackPort(t))
	w := startConnectWorker(t, "connect-worker", props)
	w.createConnector(t, "file-source", map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"tasks.max":       "1", "file": in, "topic": topic,
	})
	w.createConnector(t, "file-sink", map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
		"tasks.max":       "1", "file": out, "topics": topic,
	})
	waitFileLines(t, out, first, 90*time.Second)
	if n := topicRecords(ctx, t, adm, topic); n != int64(len(first)) {
		t.Fatalf("%s holds %d records, want %d", topic, n, len(first))
	}

	// Connect created its internal topics compacted, as it requires.
	checkCleanupPolicy(ctx, t, adm, map[string]string{props["config.storage.topic"]: "compact",
		props["offset.storage.topic"]: "compact", props["status.storage.topic"]: "compact"})

	// Restart: the connectors resume from their stored offsets.
	w.stop()
	second := numberedLines("second", 0, 10)
	appendLines(t, in, second)
	w = startConnectWorker(t, "connect-worker-restarted", props)
	waitFileLines(t, out, append(first, second...), 90*time.Second)
	if n := topicRecords(ctx, t, adm, topic); n != int64(len(first)+len(second)) {
		t.Fatalf("%s holds %d records after the restart, want %d (the source re-sent)", topic, n, len(first)+len(second))
	}
	w.stop()
}
