package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

var mirrorFamily = connectFamilyOf("mirrormaker2", "connect-mirror", "Apache Kafka MirrorMaker 2 (connect-mirror)")

// TestMirrorMaker2 mirrors a topic between two gateways with the MirrorMaker 2 driver.
func TestMirrorMaker2(t *testing.T) {
	runScenarios(t, mirrorFamily, []Scenario{
		{Name: "mirror-between-gateways", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets, FeatureGroupAdmin, FeatureConfigs},
			Run: mirrorBetweenGateways},
	})
}

// startTargetCluster starts a second gateway over an in-memory Iggy server of its own (on
// purpose, also when IGGY_TEST_ADDR names a real server): the target cluster of a mirror.
// Both are stopped when t ends.
func startTargetCluster(t *testing.T) *Env {
	t.Helper()
	if sharedEnv(t).External() {
		t.Skip("needs gateways started by the harness (IGGYGW_E2E_BOOTSTRAP is set)")
	}
	backend, err := startMemIggy("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env, err := startGatewayEnv(backend)
	if err != nil {
		backend.close()
		t.Fatalf("target gateway: %v", err)
	}
	t.Cleanup(func() {
		if err := env.gateway.Stop(); err != nil {
			t.Errorf("target gateway exited with %v\n%s", err, indent(env.gateway.Output.String()))
		}
		if races := raceReports(env.gateway.Output); races != "" {
			t.Errorf("data race in the target gateway:\n%s", races)
		}
		backend.close()
	})
	env.watch(t)
	return env
}

// mirrorBetweenGateways: MirrorMaker 2 (dedicated mode, one flow src→dst) copies a topic
// from the shared gateway to a second gateway record for record, emits checkpoints for a
// consumer group of the source, and commits the group's translated offsets on the target.
func mirrorBetweenGateways(t *testing.T, src *Env) {
	dst := startTargetCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := TopicName(t)
	group := strings.TrimPrefix(topic, "e2e-") + "-group"
	srcAdm := src.Admin(t)
	if resp, err := srcAdm.CreateTopic(ctx, 2, 1, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, resp.Err)
	}
	const records = 60
	prod := src.Kgo(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range records {
		r := &kgo.Record{Topic: topic, Partition: int32(i % 2), Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// A consumer group of the source has read everything. (MirrorMaker translates an offset
	// within a partition only as far as the offset syncs it kept: exactly at the end, maybe
	// lower before it.)
	committed := map[int32]int64{0: records / 2, 1: records / 2}
	var offs kadm.Offsets
	for p, o := range committed {
		offs.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	if resp, err := srcAdm.CommitOffsets(ctx, group, offs); err != nil || resp.Error() != nil {
		t.Fatalf("commit on the source: %v %v", err, resp.Error())
	}

	props := map[string]string{
		"clusters":                              "src, dst",
		"src.bootstrap.servers":                 src.Bootstrap,
		"dst.bootstrap.servers":                 dst.Bootstrap,
		"src->dst.enabled":                      "true",
		"src->dst.topics":                       topic,
		"src->dst.groups":                       group,
		"dst->src.enabled":                      "false",
		"dst->src.emit.heartbeats.enabled":      "false",
		"replication.factor":                    "1",
		"checkpoints.topic.replication.factor":  "1",
		"heartbeats.topic.replication.factor":   "1",
		"offset-syncs.topic.replication.factor": "1",
		"offset.storage.replication.factor":     "1",
		"status.storage.replication.factor":     "1",
		"config.storage.replication.factor":     "1",
		"offset.storage.partitions":             "2",
		"status.storage.partitions":             "1",
		"tasks.max":                             "1",
		"offset.lag.max":                        "0",
		"emit.checkpoints.interval.seconds":     "1",
		"emit.heartbeats.interval.seconds":      "1",
		"sync.group.offsets.enabled":            "true",
		"sync.group.offsets.interval.seconds":   "1",
		"refresh.groups.interval.seconds":       "1",
		"refresh.topics.interval.seconds":       "5",
		"offset.flush.interval.ms":              "500",
		"scheduled.rebalance.max.delay.ms":      "0",
		"src.consumer.auto.offset.reset":        "earliest",
		"plugin.discovery":                      "hybrid_warn",
		"task.shutdown.graceful.timeout.ms":     "5000",
	}
	// The target topic exists already with records of its own, so mirrored offsets differ
	// from the source's by shift and translating them is not the identity.
	mirrored := "src." + topic
	const shift = 5
	dstAdm := dst.Admin(t)
	if resp, err := dstAdm.CreateTopic(ctx, 2, 1, nil, mirrored); err != nil || resp.Err != nil {
		t.Fatalf("create %s on the target: %v %v", mirrored, err, resp.Err)
	}
	pre := dst.Kgo(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 2 * shift {
		if err := pre.ProduceSync(ctx, &kgo.Record{Topic: mirrored, Partition: int32(i % 2), Value: []byte("target's own")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	want := map[int32]int64{}
	for p, o := range committed {
		want[p] = o + shift
	}

	path := writeProperties(t, t.TempDir(), "mm2.properties", props)
	mm := startConnectJava(t, "mirrormaker2", "org.apache.kafka.connect.mirror.MirrorMaker", path)

	// Every record arrives, in the same partition and order.
	cl := dst.Kgo(t, kgo.ConsumeTopics(mirrored), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMinAge(250*time.Millisecond), kgo.MetadataMaxAge(time.Second))
	seen := map[string]bool{}
	for len(seen) < records {
		if dead, err := mm.exited(); dead {
			t.Fatalf("MirrorMaker exited: %v", err)
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%d of %d records mirrored to %s", len(seen), records, mirrored)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < shift {
				return
			}
			var i int
			if _, err := fmt.Sscanf(string(r.Value), "v%d", &i); err != nil || string(r.Key) != fmt.Sprintf("k%d", i) {
				t.Fatalf("mirrored record %q=%q", r.Key, r.Value)
			}
			if r.Partition != int32(i%2) || r.Offset != int64(i/2)+shift {
				t.Errorf("record %d mirrored to partition %d offset %d, want %d/%d", i, r.Partition, r.Offset, i%2, i/2+shift)
			}
			if seen[string(r.Value)] {
				t.Errorf("record %s mirrored twice", r.Value)
			}
			seen[string(r.Value)] = true
		})
	}

	// Checkpoints flow, and the group's offsets are translated and committed on the target.
	var got map[int32]int64
	for fmt.Sprint(got) != fmt.Sprint(want) {
		if ctx.Err() != nil {
			t.Fatalf("group %s on the target: %v, want %v", group, got, want)
		}
		time.Sleep(500 * time.Millisecond)
		fetched, err := dstAdm.FetchOffsets(ctx, group)
		if err != nil {
			continue
		}
		got = map[int32]int64{}
		fetched.Each(func(o kadm.OffsetResponse) {
			if o.Topic == mirrored && o.Err == nil {
				got[o.Partition] = o.At
			}
		})
	}
	if n := topicRecords(ctx, t, dstAdm, "src.checkpoints.internal"); n == 0 {
		t.Error("no checkpoint in src.checkpoints.internal")
	}
	if n := topicRecords(ctx, t, dstAdm, "heartbeats"); n == 0 {
		t.Error("no heartbeat in heartbeats")
	}
	mm.stop()
}
