package broker

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/dataplane"
	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/loglimit"
	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// gateway is a broker behind a real listener, optionally bridged to an in-memory Iggy server.
type gateway struct {
	t      *testing.T
	b      *Broker
	srv    *listener.Server
	addr   string
	iggy   *iggy.Client      // nil without bridge
	ms     *memserver.Server // nil without bridge
	config *config.Config
	budget *listener.Budget // the listener's request memory
}

type gatewayOpts struct {
	bridge bool
	env    []string
	// wrap lets a test put a fault-injecting iggy.API between broker and client.
	wrap func(iggy.API) iggy.API
	// groups configures the group coordinator (nil: groups.DefaultConfig()).
	groups *groups.Config
	// placement replaces the single-gateway placement (nil: placement.Single).
	placement placement.Placement
	// logger replaces testLogger(t).
	logger *slog.Logger
	// data observes the data path (nil: nobody).
	data dataplane.DataObserver
	// logLimit rate-limits per-entry log lines (nil: not limited).
	logLimit *loglimit.Limiter
	// onTruncation is the data plane's truncation hook (nil: none).
	onTruncation func()
	// restartOf bridges to the Iggy of another test gateway, as that gateway restarted would.
	restartOf *gateway
	// iggyNodes is the size of the Iggy cluster the broker is told of (0: one node).
	iggyNodes int
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func startGateway(t *testing.T, o gatewayOpts) *gateway {
	t.Helper()
	env := append([]string{"IGGY_KAFKA_BIND_ADDR=127.0.0.1:0"}, o.env...)
	cfg, err := config.Load(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	g := &gateway{t: t, config: cfg}
	opts := Options{Config: cfg, Logger: testLogger(t), ClusterID: ClusterID("test")}
	if o.logger != nil {
		opts.Logger = o.logger
	}
	if o.restartOf != nil {
		o.bridge = true
		g.ms, g.iggy = o.restartOf.ms, o.restartOf.iggy
	} else if o.bridge {
		ms, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ms.Close() })
		g.ms = ms
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cl, err := iggy.Dial(ctx, iggy.Config{Addr: ms.Addr(), Username: "iggy", Password: "iggy", PoolSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		g.iggy = cl
	}
	if o.bridge {
		cl := g.iggy
		opts.Iggy = cl
		if o.wrap != nil {
			opts.Iggy = o.wrap(cl)
		}
		opts.Offsets = loadOffsetStore(t, cl)
		opts.TopicState = loadTopicState(t, cl)
	}
	opts.Groups = o.groups
	opts.DataObserver = o.data
	opts.LogLimiter = o.logLimit
	opts.Placement = o.placement
	opts.OnTruncation = o.onTruncation
	if o.iggyNodes > 0 {
		opts.IggyNodes = func() int { return o.iggyNodes }
	}
	g.b, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", cfg.Listeners[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	g.addr = ln.Addr().String()
	g.b.SetAdvertisedPort(cfg.Listeners[0].Name, ln.Addr().(*net.TCPAddr).Port)
	l := cfg.Limits
	g.budget = listener.NewBudget(int64(l.MaxRequestMemory))
	g.srv = listener.New(listener.Config{
		Name: cfg.Listeners[0].Name, Dispatcher: g.b, Logger: opts.Logger,
		MaxFrameSize: l.MaxFrameSize, MaxConnections: l.MaxConnections, MaxInFlight: l.MaxInFlight,
		IdleTimeout: l.IdleTimeout, ReadTimeout: l.ReadTimeout, WriteTimeout: l.WriteTimeout,
		Budget: g.budget,
	})
	done := make(chan error, 1)
	go func() { done <- g.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		g.b.BeginShutdown()
		g.srv.Shutdown(ctx)
		<-done
		g.b.Close()
	})
	return g
}

// kafka returns a franz-go client and admin client connected to the gateway.
func (g *gateway) kafka(opts ...kgo.Opt) (*kgo.Client, *kadm.Client) {
	g.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(g.addr), kgo.MetadataMinAge(10 * time.Millisecond)}, opts...)...)
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
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

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func hostPort(t *testing.T, addr string) (string, int32) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return h, int32(port)
}

// produceCode calls the Produce handler directly and returns the single partition's code and
// base offset.
func (g *gateway) produceCode(t *testing.T, req *kmsg.ProduceRequest) (int16, int64) {
	t.Helper()
	resp, err := g.b.produce(ctxT(t), dataConn, req)
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
