package broker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// TestTruncationMovesConsumerToDivergence: a franz-go consumer has read a partition to its
// end; Iggy loses the tail (the in-memory server's TruncatePartition) and new records are
// written over the lost offsets. The gateway detects the truncation, bumps the leader epoch,
// fences the consumer's fetch, and answers its OffsetForLeaderEpoch validation with the
// divergence point: the consumer continues there (not at the beginning), reporting the data
// loss, and reads exactly the new records.
func TestTruncationMovesConsumerToDivergence(t *testing.T) {
	if os.Getenv("IGGY_TEST_ADDR") != "" {
		t.Skip("truncation is simulated with the in-memory server's TruncatePartition; a real Iggy server cannot be told to lose a tail")
	}
	var truncations atomic.Int32
	g := startGateway(t, gatewayOpts{bridge: true})
	g.b.onTruncation = func() { truncations.Add(1) }
	g.mkTopic("kafka", "trunc", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	producer, adm := g.kafka(kgo.DefaultProduceTopic("trunc"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			r := &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", prefix, i), Partition: 0}
			if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	consumer, _ := g.kafka(kgo.ConsumeTopics("trunc"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond))
	// consume polls until n records arrived, and returns them and whether data loss was reported.
	consume := func(n int) (recs []*kgo.Record, dataLoss bool) {
		t.Helper()
		for len(recs) < n {
			fs := consumer.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("got %d of %d records before the deadline", len(recs), n)
			}
			for _, fe := range fs.Errors() {
				var dl *kgo.ErrDataLoss
				if !errors.As(fe.Err, &dl) {
					t.Fatalf("fetch error: %v", fe.Err)
				}
				if dl.ResetTo != 60 {
					t.Fatalf("data loss reported with reset to %d, want 60: %v", dl.ResetTo, dl)
				}
				dataLoss = true
			}
			recs = append(recs, fs.Records()...)
		}
		return recs, dataLoss
	}

	produce("old", 100)
	before, _ := consume(100)
	if before[99].Offset != 99 || before[99].LeaderEpoch != 0 {
		t.Fatalf("last record before the truncation: offset %d epoch %d", before[99].Offset, before[99].LeaderEpoch)
	}

	var commit kadm.Offsets
	commit.AddOffset("trunc", 0, 100, 0)
	if _, err := adm.CommitOffsets(ctx, "grp", commit); err != nil {
		t.Fatal(err)
	}
	if err := g.ms.TruncatePartition("kafka", "trunc", 0, 60); err != nil {
		t.Fatal(err)
	}
	produce("new", 20) // offsets 60..79 again
	after, dataLoss := consume(20)
	if !dataLoss {
		t.Error("the consumer did not report the data loss")
	}
	for i, r := range after {
		if want := fmt.Sprintf("new-%d", i); r.Offset != int64(60+i) || string(r.Value) != want || r.LeaderEpoch != 1 {
			t.Fatalf("record %d after the truncation: offset %d %q epoch %d; want offset %d %q epoch 1", i, r.Offset, r.Value, r.LeaderEpoch, 60+i, want)
		}
	}
	// The offset committed before the truncation is answered as stored, as Kafka does (the
	// consumer validates it with its epoch, 0).
	fetched, err := adm.FetchOffsets(ctx, "grp")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("trunc", 0); !ok || o.At != 100 || o.LeaderEpoch != 0 {
		t.Fatalf("committed offset after the truncation: %+v (found %v), want 100 in epoch 0 as stored", o, ok)
	}
	if n := truncations.Load(); n != 1 {
		t.Fatalf("%d truncations counted, want 1", n)
	}
	if e := g.b.epochs.current(partKey{Target: g.b.topics.Map().Resolve("trunc"), Partition: 0}); e != 1 {
		t.Fatalf("leader epoch %d, want 1", e)
	}
}

// TestTruncationFoundAfterReconnect: after the Iggy client reconnects, the gateway reads the
// offsets of the partitions it knows and finds a truncation before any client reads there.
func TestTruncationFoundAfterReconnect(t *testing.T) {
	if os.Getenv("IGGY_TEST_ADDR") != "" {
		t.Skip("truncation is simulated with the in-memory server's TruncatePartition; a real Iggy server cannot be told to lose a tail")
	}
	found := make(chan struct{}, 1)
	g := startGateway(t, gatewayOpts{bridge: true})
	g.b.onTruncation = func() { found <- struct{}{} }
	g.mkTopic("kafka", "recon", 1)
	producer, _ := g.kafka(kgo.DefaultProduceTopic("recon"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 10 {
		if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.ms.TruncatePartition("kafka", "recon", 0, 4); err != nil {
		t.Fatal(err)
	}
	g.b.IggyReconnected()
	select {
	case <-found:
	case <-ctx.Done():
		t.Fatal("no truncation found after the reconnect")
	}
	g.b.StopTruncationChecks()
	k := partKey{Target: g.b.topics.Map().Resolve("recon"), Partition: 0}
	if e, end := g.b.epochs.endOffset(k, 0, 4); e != 0 || end != 4 || g.b.epochs.current(k) != 1 {
		t.Fatalf("epoch 0 ends at %d (epoch %d), current %d; want 4 and current 1", end, e, g.b.epochs.current(k))
	}
}

// TestRecreatedTopicIsNoTruncation: a topic deleted and created again under the same name by a
// native Iggy client (not through the gateway, which would forget it) has lower offsets than
// the gateway wrote to the old one. That is a new topic, not a truncation: no epoch is bumped,
// the old topic's batches are not served from the tail cache, and once the gateway has asked
// Iggy again (within knownTopicTTL) consumers read the new records.
func TestRecreatedTopicIsNoTruncation(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	truncations := 0
	g := startGateway(t, gatewayOpts{bridge: true})
	g.b.data.clock = func() time.Time { return time.Unix(0, clock.Load()) }
	g.b.onTruncation = func() { truncations++ }
	g.mkTopic("kafka", "again", 1)
	for range 5 {
		g.produceValues(t, "again", 0, []byte("old-a"), []byte("old-b"))
	}
	ctx := ctxT(t)
	if got := fetchedRecords(t, &g.fetchResp(t, ctx, fetchPartitionsReq(12, "again", 0, 0)).Topics[0].Partitions[0]); len(got) == 0 || string(got[0].Value) != "old-a" {
		t.Fatalf("old topic: %v", got)
	}
	if err := g.iggy.DeleteTopic(ctx, iggy.Name("kafka"), iggy.Name("again")); err != nil {
		t.Fatal(err)
	}
	g.mkTopic("kafka", "again", 1)
	g.writeNative(t, ctx, "again", "new")
	clock.Add(int64(2 * knownTopicTTL))
	resp := g.fetchResp(t, ctx, fetchPartitionsReq(12, "again", 0, 0))
	p := &resp.Topics[0].Partitions[0]
	if got := fetchedRecords(t, p); p.ErrorCode != 0 || p.HighWatermark != 1 || len(got) != 1 || string(got[0].Value) != "new" {
		t.Fatalf("fetch of the recreated topic: code %d hw %d records %v", p.ErrorCode, p.HighWatermark, got)
	}
	k := partKey{Target: g.b.topics.Map().Resolve("again"), Partition: 0}
	if truncations != 0 || g.b.epochs.current(k) != 0 {
		t.Errorf("%d truncations, epoch %d: want none", truncations, g.b.epochs.current(k))
	}
}

// A write confirmed while the fresh read that confirms a suspected drop was on its way raises
// the known high watermark past what that read could see; it is no truncation. A read that
// still ends before what was known when it was sent is one.
func TestConfirmDropIgnoresWritesDuringTheRead(t *testing.T) {
	at := func(hw uint64) *iggy.Partition {
		return &iggy.Partition{CreatedAt: 1, CurrentOffset: hw - 1, MessagesCount: hw}
	}
	var st partState
	st.observe(at(100))
	if !st.observe(at(90)) { // a read answered before writes the gateway had seen confirmed
		t.Fatal("a lower high watermark was not suspect")
	}
	known := st.highWatermark()
	st.advance(110, 100, 10) // confirmed while the fresh read is on its way
	if _, _, truncated := st.confirmDrop(at(100), known); truncated {
		t.Error("a write confirmed during the fresh read was taken for a truncation")
	}
	if hw := st.highWatermark(); hw != 110 {
		t.Errorf("high watermark %d after the read, want 110 (the confirmed write)", hw)
	}
	known = st.highWatermark()
	if from, to, truncated := st.confirmDrop(at(60), known); !truncated || from != 110 || to != 60 {
		t.Errorf("a log ending at 60 after 110 was known: truncated %v from %d to %d", truncated, from, to)
	}
}

// Two reads that notice the same drop at once (the offset probes after a reconnect and a
// Fetch) both knew the old end when they were sent: the truncation is counted once, and only
// a log that ends lower still is a second one.
func TestConfirmDropCountsOneTruncationOnce(t *testing.T) {
	at := func(hw uint64) *iggy.Partition {
		return &iggy.Partition{CreatedAt: 1, CurrentOffset: hw - 1, MessagesCount: hw}
	}
	var st partState
	st.observe(at(2000))
	known := st.highWatermark() // both reads are sent knowing 2000
	if from, to, truncated := st.confirmDrop(at(1500), known); !truncated || from != 2000 || to != 1500 {
		t.Fatalf("first confirmation: truncated %v from %d to %d, want 2000 → 1500", truncated, from, to)
	}
	if _, _, truncated := st.confirmDrop(at(1500), known); truncated {
		t.Error("the second read of the same drop counted it again")
	}
	if from, to, truncated := st.confirmDrop(at(1200), known); !truncated || from != 1500 || to != 1200 {
		t.Errorf("a further drop: truncated %v from %d to %d, want 1500 → 1200", truncated, from, to)
	}
	if hw := st.highWatermark(); hw != 1200 {
		t.Errorf("high watermark %d, want 1200", hw)
	}
}
