package dataplane

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
	"github.com/iggygw/iggy-gateway-kafka/internal/tailcache"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// Partitions another gateway leads are refused (ownership.go) and never cached: only the led
// partition's batch is cached and served.
func TestTailCacheOnlyForLedPartitions(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, placement: leadsPartitionZero{}})
	g.mkTopic("kafka", "tl", 3)
	ctx := ctxT(t)
	// Node 1 (this gateway's id) leads partition 0 alone.
	for p := range int32(3) {
		code, _ := g.produceCode(t, testutil.ProducePartitionReq(9, -1, "tl", p, testutil.ProduceBatch(t, 0, [][]byte{[]byte(fmt.Sprint("v", p))}, nil)))
		if want := map[bool]int16{true: 0, false: kerr.NotLeaderForPartition.Code}[p == 0]; code != want {
			t.Fatalf("produce to partition %d: code %d, want %d", p, code, want)
		}
	}
	resp := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "tl", 0, 0))
	if got := fetchedRecords(t, &resp.Topics[0].Partitions[0]); len(got) != 1 || string(got[0].Value) != "v0" {
		t.Fatalf("partition 0: read %v", got)
	}
	if s := g.b.tail.Stats(); s.Batches != 1 || s.Hits != 1 {
		t.Errorf("stats %+v, want partition 0's batch cached and served once", s)
	}
}

// movingLeader is a single gateway's placement whose partitions' leader can be changed.
type movingLeader struct {
	placement.Single
	leader *atomic.Int32
}

func (m movingLeader) Leader(string, int32) int32 { return m.leader.Load() }

// Batches cached while this gateway led a partition are not served once another leads it
// (the fetch is refused with NOT_LEADER_OR_FOLLOWER), and serve again when the leadership
// comes back: Iggy's log below the cached run's end cannot have changed meanwhile.
func TestTailCacheNotServedAfterLeadershipMoves(t *testing.T) {
	leader := new(atomic.Int32)
	leader.Store(1)
	g := startGateway(t, gatewayOpts{bridge: true, placement: movingLeader{leader: leader}})
	g.mkTopic("kafka", "tm", 1)
	ctx := ctxT(t)
	g.produceValues(t, "tm", 0, []byte("v"))
	leader.Store(2)
	resp := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "tm", 0, 0))
	if p := &resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.NotLeaderForPartition.Code || len(p.RecordBatches) != 0 {
		t.Fatalf("fetch led elsewhere: code %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
	}
	if s := g.b.tail.Stats(); s.Batches != 1 || s.Hits != 0 {
		t.Errorf("stats %+v, want the batch cached and not served", s)
	}
	leader.Store(1)
	resp = g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "tm", 0, 0))
	if got := fetchedRecords(t, &resp.Topics[0].Partitions[0]); len(got) != 1 || string(got[0].Value) != "v" {
		t.Fatalf("read %v after the leadership came back", got)
	}
}

// topicReads counts GetTopic calls.
type topicReads struct {
	iggy.API
	n atomic.Int64
}

func (c *topicReads) GetTopic(ctx context.Context, stream, topic iggy.Identifier) (*iggy.Topic, error) {
	c.n.Add(1)
	return c.API.GetTopic(ctx, stream, topic)
}

// A fetch behind the high watermark the gateway knows reads no topic offsets from Iggy while
// the topic's identity was confirmed within knownTopicTTL; one at the known end does, and sees
// what native clients wrote.
func TestFetchBehindTheKnownEndSkipsTopicReads(t *testing.T) {
	tr := &topicReads{}
	g := startGateway(t, gatewayOpts{bridge: true, wrap: func(a iggy.API) iggy.API { tr.API = a; return tr }})
	g.mkTopic("kafka", "tk", 1)
	ctx := ctxT(t)
	g.produceValues(t, "tk", 0, []byte("a"), []byte("b"))
	// A first fetch confirms the topic's identity with Iggy; within knownTopicTTL of it, reads
	// behind the known end trust what the gateway knows.
	g.fetchResp(t, ctxT(t), testutil.FetchPartitionsReq(12, "tk", 0, 0))
	before := tr.n.Load()
	for _, offset := range []int64{0, 1} {
		resp := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "tk", offset, 0))
		if p := &resp.Topics[0].Partitions[0]; p.HighWatermark != 2 || len(fetchedFrom(t, p, offset)) != int(2-offset) {
			t.Fatalf("from %d: hw %d", offset, p.HighWatermark)
		}
	}
	if n := tr.n.Load() - before; n != 0 {
		t.Errorf("%d topic reads behind the known end, want none", n)
	}
	g.writeNative(t, ctx, "tk", "native")
	resp := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "tk", 2, 0))
	p := &resp.Topics[0].Partitions[0]
	if got := fetchedFrom(t, p, 2); p.HighWatermark != 3 || len(got) != 1 || string(got[0].Value) != "native" {
		t.Fatalf("at the known end: hw %d, records %v", p.HighWatermark, got)
	}
	if n := tr.n.Load() - before; n != 1 {
		t.Errorf("%d topic reads at the known end, want 1", n)
	}
}

// leadsPartitionZero is a placement in which this gateway (node 1) leads partition 0 of every
// topic and node 2 leads the others.
type leadsPartitionZero struct{ placement.Single }

func (leadsPartitionZero) Leader(_ string, partition int32) int32 {
	if partition == 0 {
		return 1
	}
	return 2
}

// The Plane checks memory pressure on its own goroutine (stopped and waited for by Close): a
// reading near the soft limit shrinks the tail cache, evicting what was produced into it;
// readings without pressure raise the limit back.
func TestTailCacheShrinksUnderMemoryPressure(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=64MiB"}})
	g.mkTopic("kafka", "mp", 1)
	g.produceValues(t, "mp", 0, []byte("cached"))
	if s := g.b.tail.Stats(); s.Batches != 1 || s.Limit != 64<<20 {
		t.Fatalf("stats %+v, want the batch cached under 64 MiB", s)
	}
	const soft = 1 << 30
	var inUse atomic.Int64
	inUse.Store(soft) // at the soft limit
	g.b.WatchMemoryPressure(time.Millisecond, func() tailcache.MemoryReading {
		return tailcache.MemoryReading{InUse: inUse.Load(), SoftLimit: soft}
	})
	waitForCondition(t, "the cache to shrink to nothing", func() bool {
		s := g.b.tail.Stats()
		return s.Limit == 0 && s.Batches == 0 && s.Shrinks > 0
	})
	inUse.Store(soft / 2)
	waitForCondition(t, "the limit to come back", func() bool { return g.b.tail.Stats().Limit == 64<<20 })
}
