package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// Durability across an Iggy crash (docs/DURABILITY.md): acks=all producers write through a
// gateway, a group commits offsets, Iggy crashes and comes back, the gateway is killed and
// restarted (so that it knows only what Iggy kept), and then every acknowledged record must
// be there exactly once and no committed offset may point past the end of its partition.
//
// The crash is the in-memory server's simulation of the real server's flush rules
// (memserver.Server.Crash). Against a real server (IGGY_TEST_ADDR) the crash is run by
// IGGY_TEST_CRASH_COMMAND (a shell command that SIGKILLs Iggy, restarts it on the same data
// and returns once it serves again); without it the crash part is skipped and the scenario
// checks the same things without a crash.

// durabilityCase is one gateway flush mode and the crash it must survive.
type durabilityCase struct {
	mode  string
	crash memserver.CrashKind
	// lossExpected: the mode does not protect against this crash, so the check must see
	// acknowledged records go missing (which proves the check can fail).
	lossExpected bool
}

func TestDurabilityIggyCrash(t *testing.T) {
	for _, c := range []durabilityCase{
		{"write", memserver.ProcessCrash, false},
		{"fsync", memserver.MachineCrash, false},
		{"write", memserver.MachineCrash, true},
		{"iggy-default", memserver.ProcessCrash, true},
	} {
		t.Run(c.mode+"/"+c.crash.String(), func(t *testing.T) { durabilityAcrossCrash(t, c) })
	}
}

const (
	durabilityPartitions = 3
	durabilityProducers  = 3
	durabilityRecords    = 300 // per producer; well under Iggy's 1024-message default threshold
	durabilityGroup      = "durability-group"
)

func durabilityAcrossCrash(t *testing.T, c durabilityCase) {
	if sharedEnv(t).External() {
		t.Skip("needs a gateway started by the harness (IGGYGW_E2E_BOOTSTRAP is set)")
	}
	backend, err := startIggyBackend()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(backend.close)
	crash := iggyCrasher(t, backend, c)
	env, err := startGatewayEnv(backend, "IGGY_KAFKA_TOPIC_FLUSH="+c.mode)
	if err != nil {
		t.Fatalf("start gateway: %v", err)
	}
	t.Cleanup(func() { env.stopGateway(t) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	topic := TopicName(t)
	adm := env.Admin(t)
	if resp, err := adm.CreateTopic(ctx, durabilityPartitions, 1, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", topic, err, resp.Err)
	}
	acked := produceAcked(ctx, t, env, topic)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("end offsets: %v %v", err, ends.Error())
	}
	committed := kadm.Offsets{}
	ends.Each(func(o kadm.ListedOffset) {
		committed.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.Offset, LeaderEpoch: -1})
	})
	if resp, err := adm.CommitOffsets(ctx, durabilityGroup, committed); err != nil || resp.Error() != nil {
		t.Fatalf("commit offsets: %v %v", err, resp.Error())
	}

	if crash == nil {
		t.Log("crash part skipped: IGGY_TEST_ADDR names a real Iggy server and IGGY_TEST_CRASH_COMMAND is not set")
	} else {
		crash()
	}
	// The gateway must not serve what it remembers: kill it, so that the restarted one knows
	// only what Iggy kept.
	env.kill(t)
	env.startAgain(t)
	adm = env.Admin(t)

	missing, dups := readBackAcked(ctx, t, env, topic, acked)
	t.Logf("%s, %s: %d records acknowledged, %d missing, %d duplicated", c.mode, c.crash, len(acked), missing, dups)
	if dups > 0 {
		t.Errorf("%d acknowledged records are present more than once", dups)
	}
	switch {
	case c.lossExpected && crash != nil && missing == 0:
		t.Errorf("flush mode %s lost nothing in a %s: the check cannot see a loss (or the simulation does not model it)", c.mode, c.crash)
	case !c.lossExpected && missing > 0:
		t.Errorf("%d acknowledged records lost in a %s with flush mode %s", missing, c.crash, c.mode)
	}
	checkCommittedWithinLog(ctx, t, adm, topic, committed, !c.lossExpected)
}

// iggyCrasher returns what crashes the backend: the in-memory server's simulation, the
// configured command for a real server, or nil when a real server cannot be crashed.
func iggyCrasher(t *testing.T, b *iggyBackend, c durabilityCase) func() {
	if b.server != nil {
		return func() {
			lost := b.server.Crash(c.crash)
			t.Logf("simulated Iggy %s: %d messages were not on disk", c.crash, lost)
		}
	}
	cmd := os.Getenv("IGGY_TEST_CRASH_COMMAND")
	if cmd == "" {
		return nil
	}
	if c.crash == memserver.MachineCrash {
		t.Skip("a machine crash of a real Iggy server cannot be run from a test")
	}
	return func() {
		if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
			t.Fatalf("IGGY_TEST_CRASH_COMMAND: %v\n%s", err, out)
		}
	}
}

// produceAcked produces with acks=all from several producers and returns the values of the
// acknowledged records. Every record must be acknowledged: nothing fails before the crash.
func produceAcked(ctx context.Context, t *testing.T, env *Env, topic string) map[string]bool {
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, durabilityProducers)
	for p := range durabilityProducers {
		cl := env.Kgo(t, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.DisableIdempotentWrite(), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range durabilityRecords {
				v := fmt.Sprintf("p%d-%d", p, i)
				cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
					if err != nil {
						select {
						case errs <- fmt.Errorf("record %s: %w", r.Value, err):
						default:
						}
						return
					}
					mu.Lock()
					acked[string(r.Value)] = true
					mu.Unlock()
				})
			}
			if err := cl.Flush(ctx); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("produce before the crash: %v", err)
	}
	return acked
}

// readBackAcked reads the topic from the start to its end offsets and counts the acknowledged
// records that are missing and the records read more than once.
func readBackAcked(ctx context.Context, t *testing.T, env *Env, topic string, acked map[string]bool) (missing, dups int) {
	adm := env.Admin(t)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("end offsets after the crash: %v %v", err, ends.Error())
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	cl := env.Kgo(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]int{}
	next := map[int32]int64{}
	done := func() bool {
		for p, end := range want {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading back %s: %v (read up to %v of %v)", topic, ctx.Err(), next, want)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch partition %d: %v", p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			next[r.Partition] = r.Offset + 1
		})
	}
	for v := range acked {
		if seen[v] == 0 {
			missing++
		}
	}
	for _, n := range seen {
		if n > 1 {
			dups += n - 1
		}
	}
	return missing, dups
}

// checkCommittedWithinLog checks, when nothing acknowledged may be lost, that the commits
// survived and none is beyond the end of its partition. When the data topic's mode lost a
// tail, commits kept by a coordinator log that did not (one created earlier in a safe mode, as
// on a real server shared by the cases) may point past the new end: the gateway answers them as
// stored, as Kafka does (docs/DATA-PATH.md, "Committed offsets past the end").
func checkCommittedWithinLog(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, committed kadm.Offsets, mustSurvive bool) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("end offsets: %v %v", err, ends.Error())
	}
	got, err := adm.FetchOffsets(ctx, durabilityGroup)
	if err != nil || got.Error() != nil {
		t.Fatalf("fetch offsets: %v %v", err, got.Error())
	}
	committed.Each(func(o kadm.Offset) {
		end, _ := ends.Lookup(topic, o.Partition)
		now, ok := got.Lookup(topic, o.Partition)
		switch {
		case mustSurvive && ok && now.At > end.Offset:
			t.Errorf("partition %d: committed offset %d is beyond the end of the log (%d)", o.Partition, now.At, end.Offset)
		case mustSurvive && (!ok || now.At != o.At):
			t.Errorf("partition %d: committed offset %s after the crash, want %d", o.Partition, offsetString(now, ok), o.At)
		}
	})
}

func offsetString(o kadm.OffsetResponse, ok bool) string {
	if !ok {
		return "none"
	}
	return strconv.FormatInt(o.At, 10)
}
