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
	"github.com/twmb/franz-go/pkg/kmsg"
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
	g := startGateway(t, gatewayOpts{bridge: true, onTruncation: func() { truncations.Add(1) }})
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
	if e := g.b.Data().LeaderEpoch(g.b.topics.Map().Resolve("trunc"), 0); e != 1 {
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
	g := startGateway(t, gatewayOpts{bridge: true, onTruncation: func() { found <- struct{}{} }})
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
	g.b.Data().IggyReconnected()
	select {
	case <-found:
	case <-ctx.Done():
		t.Fatal("no truncation found after the reconnect")
	}
	g.b.Data().StopTruncationChecks()
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version, req.ReplicaID = 4, -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = "recon"
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = 0, -1, 0
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := g.b.offsetsForLeaderEpoch(ctx, dataConn, req)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
	current := g.b.Data().LeaderEpoch(g.b.topics.Map().Resolve("recon"), 0)
	if p.ErrorCode != 0 || p.LeaderEpoch != 0 || p.EndOffset != 4 || current != 1 {
		t.Fatalf("epoch 0 ends at %d (epoch %d, code %d), current %d; want 4 and current 1", p.EndOffset, p.LeaderEpoch, p.ErrorCode, current)
	}
}
