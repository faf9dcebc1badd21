package dataplane

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/loglimit"
	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicstate"
)

// gateway is a Plane over an in-memory Iggy server (or none), served by calling its methods
// as internal/broker's handlers do. The tests that need Kafka clients, sockets or the whole
// broker live in internal/broker.
type gateway struct {
	t      testing.TB
	b      *Plane
	iggy   *iggy.Client      // nil without bridge
	ms     *memserver.Server // nil without bridge
	config *config.Config
	opts   Options // what b was built with, for restart
}

type gatewayOpts struct {
	bridge bool
	env    []string
	// wrap lets a test put a fault-injecting iggy.API between the plane and the client.
	wrap func(iggy.API) iggy.API
	// placement replaces the single-gateway placement (nil: this gateway leads everything).
	placement placement.Placement
	// logger replaces testLogger(t).
	logger *slog.Logger
	// data observes the data path (nil: nobody).
	data DataObserver
	// logLimit rate-limits per-entry log lines (nil: not limited).
	logLimit *loglimit.Limiter
	// clock replaces time.Now for the partition state (nil: time.Now).
	clock func() time.Time
	// onTruncation is the truncation hook (nil: none).
	onTruncation func()
	// poolSize is the Iggy client's pool size (0: 2; -1: the client's default, the gateway's).
	poolSize int
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func startGateway(t testing.TB, o gatewayOpts) *gateway {
	t.Helper()
	cfg, err := config.Load(nil, append([]string{"IGGY_KAFKA_BIND_ADDR=127.0.0.1:0"}, o.env...))
	if err != nil {
		t.Fatal(err)
	}
	g := &gateway{t: t, config: cfg}
	opts := Options{Config: cfg, Logger: testLogger(t), Placement: o.placement, Observer: o.data, LogLimiter: o.logLimit, OnTruncation: o.onTruncation}
	if o.logger != nil {
		opts.Logger = o.logger
	}
	if o.bridge {
		ms, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ms.Close() })
		g.ms = ms
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pool := o.poolSize
		switch pool {
		case 0:
			pool = 2
		case -1:
			pool = 0
		}
		cl, err := iggy.Dial(ctx, iggy.Config{Addr: ms.Addr(), Username: "iggy", Password: "iggy", PoolSize: pool})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		g.iggy = cl
		var api iggy.API = cl
		if o.wrap != nil {
			api = o.wrap(cl)
		}
		opts.Storage = api
		opts.Topics = topicmap.NewCache(cfg.TopicMap, func(ctx context.Context, t topicmap.Target) (uint32, uint32, uint64, error) {
			topic, err := api.GetTopic(ctx, iggy.Name(t.Stream), iggy.Name(t.Topic))
			if err != nil {
				return 0, 0, 0, err
			}
			return topic.ID, topic.PartitionsCount, topic.CreatedAt, nil
		}, 0)
		opts.TopicState = loadTopicState(t, cl)
	}
	g.opts = opts
	g.b = New(opts)
	g.b.data.clock = o.clock
	t.Cleanup(g.b.Close)
	return g
}

// loadOffsetStore builds and loads the committed-offset store over Iggy, as the gateway does at
// startup.
func loadTopicState(t testing.TB, api iggylog.API) *topicstate.Store {
	t.Helper()
	s := topicstate.New(iggylog.NewTopic(api, iggylog.ReservedStream, topicstate.DefaultTopic, 1), testLogger(t))
	if err := s.Load(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return s
}

// mkTopic creates an Iggy topic directly (as a native Iggy tool would).
func (g *gateway) mkTopic(stream, topic string, partitions uint32) {
	g.t.Helper()
	ctx := context.Background()
	if _, err := g.iggy.GetStream(ctx, iggy.Name(stream)); err != nil {
		if _, err := g.iggy.CreateStream(ctx, stream); err != nil {
			g.t.Fatal(err)
		}
	}
	if _, err := g.iggy.CreateTopic(ctx, iggy.Name(stream), topic, partitions, iggy.TopicOptions{}); err != nil {
		g.t.Fatal(err)
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var dataConn = &listener.ConnContext{ID: 1, Listener: "PLAINTEXT"}

// produceCode produces through the plane and returns the single partition's code and base
// offset.
func (g *gateway) produceCode(t *testing.T, req *kmsg.ProduceRequest) (int16, int64) {
	t.Helper()
	resp, err := g.b.Produce(ctxT(t), dataConn, req)
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	return p.ErrorCode, p.BaseOffset
}

// produceValues writes values to topic/partition through the handler and returns the base
// offset.
func (g *gateway) produceValues(t *testing.T, topic string, partition int32, values ...[]byte) int64 {
	t.Helper()
	code, base := g.produceCode(t, testutil.ProducePartitionReq(9, -1, topic, partition, testutil.ProduceBatch(t, 0, values, nil)))
	if code != 0 {
		t.Fatalf("produce: code %d", code)
	}
	return base
}

// hw reads a partition's high watermark natively.
func (g *gateway) hw(t *testing.T, topic string, partition int) uint64 {
	t.Helper()
	tp, err := g.iggy.GetTopic(ctxT(t), iggy.Name("kafka"), iggy.Name(topic))
	if err != nil {
		t.Fatal(err)
	}
	return HighWatermark(&tp.Partitions[partition])
}

// writeNative appends values to partition 0 of an Iggy topic as a native Iggy client would.
func (g *gateway) writeNative(t *testing.T, ctx context.Context, topic string, values ...string) {
	t.Helper()
	for _, v := range values {
		if _, err := g.iggy.SendMessages(ctx, iggy.Name("kafka"), iggy.Name(topic), 0, []iggy.Message{{Payload: []byte(v)}}); err != nil {
			t.Fatal(err)
		}
	}
}

func (g *gateway) fetchResp(t *testing.T, ctx context.Context, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	t.Helper()
	resp, err := g.b.Fetch(ctx, dataConn, req)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	return fetchResponse(resp)
}

// fetchAsync runs a Fetch on a goroutine of its own; its answer arrives on the
// channel, to be taken with get on the test's goroutine.
func (g *gateway) fetchAsync(ctx context.Context, req *kmsg.FetchRequest) <-chan fetchResult {
	done := make(chan fetchResult, 1)
	go func() {
		resp, err := g.b.Fetch(ctx, dataConn, req)
		r := fetchResult{err: err}
		if err == nil {
			r.resp = fetchResponse(resp)
		}
		done <- r
	}()
	return done
}

type fetchResult struct {
	resp *kmsg.FetchResponse
	err  error
}

func (r fetchResult) get(t *testing.T) *kmsg.FetchResponse {
	t.Helper()
	if r.err != nil {
		t.Fatalf("fetch: %v", r.err)
	}
	return r.resp
}

// fetchResponse unwraps a Fetch answer without releasing its buffers, so the
// records stay valid for the rest of the test.
func fetchResponse(resp kmsg.Response) *kmsg.FetchResponse {
	if r, ok := resp.(*listener.Response); ok {
		resp = r.Response
	}
	return resp.(*kmsg.FetchResponse)
}

// fetchedRecords decodes a partition's record batches.
func fetchedRecords(t *testing.T, p *kmsg.FetchResponseTopicPartition) []kgo.Record {
	t.Helper()
	return fetchedFrom(t, p, 0)
}

// fetchedFrom decodes a partition's records from offset on, as a client fetching from offset
// does: a batch may begin before it (those from the tail cache do).
func fetchedFrom(t *testing.T, p *kmsg.FetchResponseTopicPartition, offset int64) []kgo.Record {
	t.Helper()
	out, err := testutil.DecodeFetched(p, offset)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// restart is another Plane over the same Iggy, as the data plane of a restarted gateway.
func (g *gateway) restart() *gateway {
	g2 := *g
	g2.b = New(g.opts)
	g.t.Cleanup(g2.b.Close)
	return &g2
}
