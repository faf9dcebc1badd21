package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Truncation end to end (docs/DATA-PATH.md, "Truncation and leader epochs"): a consumer has read
// a partition to its end; Iggy loses the partition's tail and restarts; the gateway notices,
// bumps the leader epoch and counts the truncation; new records take the lost offsets. A
// consumer that validates its position (KIP-320) moves to the divergence point and reads the
// new records, instead of resetting to the beginning (duplicates) or to the end (loss).

// TestTruncationJava runs the truncation scenario with the Java console consumer.
func TestTruncationJava(t *testing.T) {
	runScenarios(t, javaFamily, []Scenario{
		{Name: "truncation-consumer-to-divergence", Needs: faultProduceNeeds, Covers: []Cell{CellConsume}, Run: func(t *testing.T, _ *Env) {
			truncationUnderConsumer(t, false, func(env *Env, topic string) *processMember {
				c := javaCmd("", "kafka-console-consumer.sh", "--bootstrap-server", env.Bootstrap, "--topic", topic,
					"--partition", "0", "--from-beginning",
					"--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true")
				return &processMember{p: startBackground(t, c), parse: parseJavaLine}
			})
		}},
	})
}

// TestTruncationKcat runs the truncation scenario with kcat. The Debian kcat is built on
// librdkafka 2.0, which predates KIP-320 in librdkafka (2.1): it does not validate its position,
// gets OFFSET_OUT_OF_RANGE and applies auto.offset.reset (earliest: it reads the partition again
// from the start). The scenario asserts exactly that.
func TestTruncationKcat(t *testing.T) {
	runScenarios(t, kcatFamily, []Scenario{
		{Name: "truncation-consumer-resets", Needs: faultProduceNeeds, Covers: []Cell{CellConsume}, Run: func(t *testing.T, _ *Env) {
			truncationUnderConsumer(t, true, func(env *Env, topic string) *processMember {
				c := Cmd{Name: "kcat", Args: []string{"-C", "-b", env.Bootstrap, "-t", topic, "-p", "0", "-o", "beginning",
					"-X", "auto.offset.reset=earliest", "-u", "-q", "-f", `%p %o %s\n`}}
				return &processMember{p: startBackground(t, c), parse: parseKcatLine}
			})
		}},
	})
}

// pyAssignedConsumer reads partition 0 of a topic from the beginning with librdkafka's
// consumer (assigned, no commits, auto.offset.reset=earliest) and prints "PARTITION OFFSET
// VALUE" per record and "error ERROR" per consumer error.
const pyAssignedConsumer = `
import sys
from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING

bootstrap, topic = sys.argv[1], sys.argv[2]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused-" + topic, "enable.auto.commit": False,
              "auto.offset.reset": "earliest"})
c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
while True:
    m = c.poll(0.5)
    if m is None:
        continue
    if m.error():
        print("error", str(m.error()).replace("\n", " "), flush=True)
        continue
    print(m.partition(), m.offset(), m.value().decode(), flush=True)
`

// TestTruncationPython runs the truncation scenario with confluent-kafka (librdkafka 2.1 and
// later validate their position after a leader-epoch change, KIP-320).
func TestTruncationPython(t *testing.T) {
	runScenarios(t, pythonFamily, []Scenario{
		{Name: "truncation-consumer-to-divergence", Needs: faultProduceNeeds, Covers: []Cell{CellConsume}, Run: func(t *testing.T, _ *Env) {
			truncationUnderConsumer(t, false, func(env *Env, topic string) *processMember {
				c := Cmd{Name: pythonBin(), Args: []string{"-c", pyAssignedConsumer, env.Bootstrap, topic}}
				return &processMember{p: startBackground(t, c), parse: parseKcatLine}
			})
		}},
	})
}

const (
	truncationBefore  = 2000 // records read before the truncation
	truncationKept    = 1500 // the partition's end after it
	truncationAfter   = 300  // records produced after it, at the lost offsets
	metricTruncations = "iggy_gateway_kafka_partition_truncations_total"
)

// truncationUnderConsumer: a consumer started by consumer reads the 2000 records of a
// one-partition topic; the partition is truncated to 1500 underneath it and Iggy's connections
// drop (a restart that lost the tail); once the gateway has counted the truncation, 300 new
// records are produced at offsets 1500–1799. The consumer must read each of them once, at its
// offset. resetsToStart says what it does meanwhile: false, it moves to the divergence point
// and reads no old record twice; true (a client that does not validate its position), it
// applies auto.offset.reset=earliest and reads the 1500 kept records exactly once more.
// Against a real Iggy server (IGGY_TEST_ADDR) the truncation cannot be caused: that step is
// skipped and the consumer must read all 2300 once.
func truncationUnderConsumer(t *testing.T, resetsToStart bool, consumer func(env *Env, topic string) *processMember) {
	setting, maddr := metricsEnv(t)
	env := startRestartableEnv(t, setting)
	topic := env.CreateTopic(t, 1)
	ctx := ctxFor(t, 3*time.Minute)
	produce := func(prefix string, n int) {
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "%s-%04d", prefix, i)})
		}
		if err := env.Kgo(t).ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", prefix, err)
		}
	}
	produce("old", truncationBefore)
	c := consumer(env, topic)
	readAtLeast := func(what string, n int) {
		waitFor(t, 90*time.Second, what, func() bool { return len(c.records()) >= n })
	}
	readAtLeast("the consumer to read the 2000 records", truncationBefore)

	truncated := env.iggy.server != nil
	if truncated {
		if err := env.iggy.server.TruncatePartition(kafkaStream, topic, 0, truncationKept); err != nil {
			t.Fatal(err)
		}
		env.iggy.server.DropConnections()
		waitFor(t, 30*time.Second, "the gateway to count the truncation in /metrics", func() bool {
			return scrapeMetrics(t, maddr)[metricTruncations] == 1
		})
	} else {
		t.Log("truncation step skipped: IGGY_TEST_ADDR names a real Iggy server, whose log cannot be truncated from a test")
	}
	produce("new", truncationAfter)
	newAt := int64(truncationBefore)
	if truncated {
		newAt = truncationKept
	}
	waitFor(t, 90*time.Second, "the consumer to read the 300 new records", func() bool {
		n := 0
		for _, r := range c.records() {
			if strings.HasPrefix(r.value, "new-") {
				n++
			}
		}
		return n >= truncationAfter
	})

	copies := map[string]int{}
	for _, r := range c.records() {
		copies[r.value]++
		var i int
		if _, err := fmt.Sscanf(r.value, "new-%d", &i); err == nil && r.offset != newAt+int64(i) {
			t.Errorf("%s read at offset %d, want %d", r.value, r.offset, newAt+int64(i))
		}
	}
	reread := 0
	for i := range truncationBefore {
		v := fmt.Sprintf("old-%04d", i)
		want := 1
		if truncated && resetsToStart && i < truncationKept {
			want = 2
		}
		if copies[v] != want {
			if reread++; reread <= 10 {
				t.Errorf("%s read %d times, want %d", v, copies[v], want)
			}
		}
	}
	for i := range truncationAfter {
		if v := fmt.Sprintf("new-%04d", i); copies[v] != 1 {
			t.Errorf("%s read %d times, want once", v, copies[v])
		}
	}
	if got, want := scrapeMetrics(t, maddr)[metricTruncations], map[bool]float64{true: 1, false: 0}[truncated]; got != want {
		t.Errorf("%s = %v, want %v", metricTruncations, got, want)
	}
	t.Logf("read %d records; the %d new ones from offset %d (resets to the start: %v)", len(c.records()), truncationAfter, newAt, resetsToStart)
}
