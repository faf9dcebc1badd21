package dataplane

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// panickingStorage panics on reads and writes of partition 1 while armed, as a bug in the
// storage layer or below it would.
type panickingStorage struct {
	iggy.API
	armed atomic.Bool
}

func (p *panickingStorage) PollMessages(ctx context.Context, req iggy.PollRequest) (*iggy.Polled, error) {
	if p.armed.Load() && req.Partition != nil && *req.Partition == 1 && req.Strategy.Kind == iggy.PollOffset {
		panic("injected poll panic")
	}
	return p.API.PollMessages(ctx, req)
}

func (p *panickingStorage) SendBatch(ctx context.Context, stream, topic iggy.Identifier, partition uint32, b *iggy.Batch) (iggy.SendConfirmation, error) {
	if p.armed.Load() && partition == 1 {
		panic("injected send panic")
	}
	return p.API.SendBatch(ctx, stream, topic, partition, b)
}

// A panic while reading or writing one partition, on the handler's goroutine or a fan-out
// one, answers that partition UNKNOWN_SERVER_ERROR; the others are served, and so are later
// requests.
func TestFanOutPanicsAnswerThePartition(t *testing.T) {
	ps := &panickingStorage{}
	// The tail cache is off: the records written below would be fetched from it, not polled.
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=0"},
		wrap: func(a iggy.API) iggy.API { ps.API = a; return ps }})
	g.mkTopic("kafka", "p", 2)
	for p := range int32(2) {
		g.produceValues(t, "p", p, []byte("before"))
	}
	ps.armed.Store(true)

	for _, tt := range []struct {
		name     string
		maxBytes int32 // of the request: partitions that do not fit together are read in turn
	}{{"parallel", 50 << 20}, {"sequential", 1 << 20}} {
		t.Run("fetch "+tt.name, func(t *testing.T) {
			req := testutil.FetchPartitionsReq(12, "p", 0, 0, 1)
			req.MaxBytes = tt.maxBytes
			resp := g.fetchResp(t, ctxT(t), req)
			parts := resp.Topics[0].Partitions
			if parts[0].ErrorCode != 0 || len(fetchedRecords(t, &parts[0])) != 1 {
				t.Errorf("partition 0: code %d, want its record", parts[0].ErrorCode)
			}
			if parts[1].ErrorCode != kerr.UnknownServerError.Code || len(parts[1].RecordBatches) != 0 {
				t.Errorf("partition 1: code %d with %d bytes, want UNKNOWN_SERVER_ERROR", parts[1].ErrorCode, len(parts[1].RecordBatches))
			}
		})
	}

	t.Run("produce", func(t *testing.T) {
		req := testutil.ProducePartitionReq(9, -1, "p", 0, testutil.ProduceBatch(t, 0, [][]byte{[]byte("after")}, nil))
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = 1, testutil.ProduceBatch(t, 0, [][]byte{[]byte("after")}, nil)
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
		resp, err := g.b.Produce(ctxT(t), dataConn, req)
		if err != nil {
			t.Fatal(err)
		}
		parts := resp.(*kmsg.ProduceResponse).Topics[0].Partitions
		if parts[0].ErrorCode != 0 || parts[0].BaseOffset != 1 {
			t.Errorf("partition 0: code %d base %d, want written at 1", parts[0].ErrorCode, parts[0].BaseOffset)
		}
		if parts[1].ErrorCode != kerr.UnknownServerError.Code || parts[1].BaseOffset != -1 {
			t.Errorf("partition 1: code %d base %d, want UNKNOWN_SERVER_ERROR", parts[1].ErrorCode, parts[1].BaseOffset)
		}
		// The lane to partition 1 was let go: the next write to it is not stuck behind.
		ps.armed.Store(false)
		if code, base := g.produceCode(t, testutil.ProducePartitionReq(9, -1, "p", 1, testutil.ProduceBatch(t, 0, [][]byte{[]byte("later")}, nil))); code != 0 || base != 1 {
			t.Errorf("later write to partition 1: code %d base %d, want written at 1", code, base)
		}
	})
}

// panicsOf is how many panics of component internal/supervise recovered so far.
func panicsOf(component string) int64 {
	for _, c := range supervise.Panics() {
		if c.Component == component {
			return c.Panics
		}
	}
	return 0
}

// topicPanics panics on the next GetTopic calls while panics is above zero, one per call.
type topicPanics struct {
	iggy.API
	panics atomic.Int32
	calls  atomic.Int32
}

func (p *topicPanics) GetTopic(ctx context.Context, stream, topic iggy.Identifier) (*iggy.Topic, error) {
	p.calls.Add(1)
	if p.panics.Add(-1) >= 0 {
		panic("injected topic read panic")
	}
	return p.API.GetTopic(ctx, stream, topic)
}

// A panic in a topic probe (the goroutine that wakes fetches waiting on a topic when native
// Iggy clients write to it) is recovered and counted; the probe goes on, so the waiting fetch
// is still woken by a native write.
func TestTopicProbePanicIsRecovered(t *testing.T) {
	tp := &topicPanics{}
	g := startGateway(t, gatewayOpts{bridge: true, wrap: func(a iggy.API) iggy.API { tp.API = a; return tp }})
	g.mkTopic("kafka", "probed", 1)
	ctx := ctxT(t)
	req := testutil.FetchPartitionsReq(12, "probed", 0, 0)
	req.MaxWaitMillis = 60_000 // longer than the test's context: only new data ends it
	done := g.fetchAsync(ctx, req)
	waitForCondition(t, "the fetch to wait", func() bool { return g.waiting("probed") })
	before := panicsOf("topic_probe")
	tp.panics.Store(2) // the next two probe rounds panic
	waitForCondition(t, "the probe to panic twice", func() bool { return panicsOf("topic_probe") >= before+2 })
	g.writeNative(t, ctx, "probed", "native")
	select {
	case r := <-done:
		if got := fetchedRecords(t, &r.get(t).Topics[0].Partitions[0]); len(got) != 1 || string(got[0].Value) != "native" {
			t.Fatalf("woke with %v", got)
		}
	case <-ctx.Done():
		t.Fatal("the native write did not wake the fetch: the probe died with its panic")
	}
}

// Close stops the topic probes still running (a fetch still waiting, or one that never
// unwatched) and waits for them: none outlives the Plane.
func TestCloseStopsTopicProbes(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "owned", 1)
	opts := []goleak.Option{goleak.IgnoreCurrent()}
	unwatch := g.b.watchTopic(g.b.topics.Map().Resolve("owned"))
	defer unwatch()
	waitForCondition(t, "the probe to run", func() bool { return g.waiting("owned") })
	g.b.Close()
	if err := goleak.Find(opts...); err != nil {
		t.Fatalf("a probe outlived Close: %v", err)
	}
	// A Plane closed starts no probe: a fetch waiting then meets new data when it reads again.
	g.b.watchTopic(g.b.topics.Map().Resolve("other"))()
	if err := goleak.Find(opts...); err != nil {
		t.Fatalf("a probe started after Close: %v", err)
	}
}

// A panic while checking one topic after an Iggy reconnect is recovered and counted; the other
// topics are checked, and the next reconnect starts checks again.
func TestTruncationCheckPanicIsRecovered(t *testing.T) {
	tp := &topicPanics{}
	g := startGateway(t, gatewayOpts{bridge: true, wrap: func(a iggy.API) iggy.API { tp.API = a; return tp }})
	for _, name := range []string{"c1", "c2"} {
		g.mkTopic("kafka", name, 1)
		g.produceValues(t, name, 0, []byte("x"))
	}
	before := panicsOf("truncation_check")
	checked := func() bool {
		c := &g.b.truncCheck
		c.mu.Lock()
		defer c.mu.Unlock()
		return !c.running
	}
	tp.calls.Store(0)
	tp.panics.Store(1)
	g.b.IggyReconnected()
	waitForCondition(t, "the check to end", checked)
	if got := panicsOf("truncation_check"); got != before+1 {
		t.Fatalf("panics %d, want %d", got, before+1)
	}
	if n := tp.calls.Load(); n != 2 {
		t.Fatalf("%d topic reads, want both topics read despite the panic", n)
	}
	tp.calls.Store(0)
	g.b.IggyReconnected()
	waitForCondition(t, "the next check to end", checked)
	if n := tp.calls.Load(); n != 2 {
		t.Fatalf("%d topic reads after the next reconnect, want 2", n)
	}
}
