package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/auth"
	"github.com/iggygw/iggy-gateway-kafka/internal/broker"
	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/dataplane"
	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
	"github.com/iggygw/iggy-gateway-kafka/internal/epochlog"
	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/loglimit"
	"github.com/iggygw/iggy-gateway-kafka/internal/metrics"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/tailcache"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

// memoryPressureInterval is how often the tail cache checks the process's memory against the
// soft memory limit (tailcache.Cache.AdjustForPressure): each check near the limit halves it,
// so a full cache of 1 GiB gives it back within about ten of them.
const memoryPressureInterval = 250 * time.Millisecond

// Gateway is a running gateway.
type Gateway struct {
	cfg config.Config // a copy: dev mode points its bridge at the in-memory server
	log *slog.Logger
	// logLimit rate-limits log lines of events that clients or a failing Iggy can repeat at
	// will (connections, refusals, rejected bridge logins).
	logLimit *loglimit.Limiter

	dev         *memserver.Server
	iggy        *iggy.Client
	metrics     *metrics.Metrics
	http        *http.Server
	httpServing sync.WaitGroup
	metricsAddr string
	ready       atomic.Bool                 // Kafka listeners are serving
	bridge      atomic.Pointer[iggy.Client] // for readiness checks from the HTTP goroutines
	offsets     *offsets.Store              // committed offsets; nil without the bridge
	cluster     *cluster                    // with BROKERS and the bridge: membership and ownership
	// fenceTo is the cluster the offsets store reports a lost partition to (set before the
	// store's writers start; read on their goroutines).
	fenceTo     atomic.Pointer[cluster]
	broker      *broker.Broker
	txn         *txn.Coordinator // transactions; nil when refused (transactions.go)
	security    *auth.Security
	stopReload  context.CancelFunc // ends the TLS reload loop
	reloading   sync.WaitGroup
	reconnected atomic.Pointer[dataplane.Plane] // the data plane told of Iggy reconnects, once built
	servers     []*listener.Server
	addrs       map[string]string // listener name → bound address
	failed      chan error
	serving     sync.WaitGroup
	stopOnce    sync.Once
}

// Start builds the gateway that cfg describes and returns once its Kafka listeners serve. On
// failure, or when ctx ends first (startup may wait up to IGGY_CONNECT_RETRY for Iggy), it
// releases whatever it started and returns the error.
func Start(ctx context.Context, cfg *config.Config, log *slog.Logger) (*Gateway, error) {
	g := &Gateway{cfg: *cfg, log: log}
	if err := g.start(ctx); err != nil {
		g.close()
		return nil, err
	}
	return g, nil
}

// Failed delivers the error of a listener that stopped serving on its own.
func (g *Gateway) Failed() <-chan error { return g.failed }

// Addr returns the address the named Kafka listener is bound to ("" for an unknown name).
func (g *Gateway) Addr(listenerName string) string { return g.addrs[listenerName] }

// MetricsAddr returns the address of the metrics endpoint ("" when it is off).
func (g *Gateway) MetricsAddr() string { return g.metricsAddr }

// Stop drains the listeners within the drain timeout, writes the committed-offset checkpoint
// and releases Iggy sessions and the dev server. Calls after the first do nothing.
func (g *Gateway) Stop() {
	g.stopOnce.Do(func() {
		g.shutdown()
		g.close()
	})
}

func (g *Gateway) start(ctx context.Context) error {
	cfg := &g.cfg
	if cfg.MetricsAddr != "" {
		if err := g.startMetrics(); err != nil {
			return err
		}
	}
	g.logLimit = loglimit.New(logLinesPerSecond, logLineBurst, g.logSuppressed())
	if cfg.Dev {
		if err := g.startDev(); err != nil {
			return err
		}
	}
	groupsCfg := groups.DefaultConfig()
	groupsCfg.InitialRebalanceDelay = cfg.GroupInitialRebalanceDelay
	opts := broker.Options{Config: cfg, Logger: g.log, ClusterID: broker.ClusterID("storage-free"), LogLimiter: g.logLimit, Groups: &groupsCfg}
	if g.metrics != nil {
		opts.DataObserver = g.metrics
	}
	if cfg.Bridge.Enabled {
		obs := g.bridgeObserver()
		cl, err := connectBridge(ctx, cfg.Bridge, g.log, g.iggyReconnected, obs)
		if err != nil {
			return err
		}
		obs.started.Store(true)
		g.watchBridge(cl)
		g.iggy = cl
		g.bridge.Store(cl)
		if err := ensureDefaultStream(ctx, cl, cfg.DefaultStream, g.log); err != nil {
			return err
		}
		flush := durability.Mode(cfg.TopicFlush)
		if len(cfg.Peers) == 0 {
			if g.offsets, err = loadOffsets(ctx, cl, g.log, flush, g.offsetsOption, g.offsetsLoaded); err != nil {
				return err
			}
		} else {
			if g.offsets, err = newOffsets(coordinatorLog(cl, flush), g.log, g.offsetsOption); err != nil {
				return err
			}
			if g.cluster, err = g.startCluster(ctx, g.offsets); err != nil {
				return err
			}
			opts.Placement = g.cluster.place
		}
		if opts.TopicState, err = loadTopicState(ctx, cl, g.log, flush, g.offsets); err != nil {
			return err
		}
		warnBufferedTopics(ctx, cl, cfg.DefaultStream, g.log)
		if opts.Epochs, err = openEpochLog(ctx, cl, g.log, flush); err != nil {
			return err
		}
		if g.metrics != nil {
			opts.OnTruncation = g.metrics.PartitionTruncated
		}
		opts.Iggy = cl
		opts.IggyNodes = cl.ClusterSize // the replication Kafka tools are told of
		opts.Offsets = g.offsets
		opts.ClusterID = broker.ClusterID(clusterSeed(ctx, cl, cfg.Bridge.Addr))
	} else {
		g.log.Warn("bridge to Iggy is off: Kafka data and topic APIs store nothing and say so (set IGGY_KAFKA_BRIDGE_ENABLED=true, or --dev to try it out)")
	}
	if err := g.startSecurity(); err != nil {
		return err
	}
	opts.Authenticator = g.security.Authenticator()
	b, err := broker.New(opts)
	if err != nil {
		return err
	}
	g.broker = b
	if g.metrics != nil {
		g.metrics.WatchProducers(b.Data().ProducerUsage())
	}
	g.watchTailCache()
	// The tail cache gives memory back first near the soft memory limit (docs/LIMITS.md).
	b.Data().WatchMemoryPressure(memoryPressureInterval, tailcache.ReadMemory)
	if cfg.Bridge.Enabled {
		if err := b.Data().LoadEpochs(ctx); err != nil {
			return fmt.Errorf("loading leader epochs from Iggy stream %q, topic %q: %w", iggylog.ReservedStream, epochlog.Topic, err)
		}
		g.reconnected.Store(b.Data())
		if err := g.startTransactions(ctx, g.iggy, durability.Mode(cfg.TopicFlush)); err != nil {
			return err
		}
	}
	g.watchGroups()
	return g.listen()
}

// iggyReconnected is the Iggy client's reconnect hook: the data plane checks for lost tails.
func (g *Gateway) iggyReconnected() {
	if b := g.reconnected.Load(); b != nil {
		b.IggyReconnected()
	}
}

// listen binds every listener before serving any, so a bad address fails startup cleanly.
func (g *Gateway) listen() error {
	lim := g.cfg.Limits
	budget := listener.NewBudget(int64(lim.MaxRequestMemory)) // one for the whole process
	budget.SetAddressShare(int64(lim.MaxRequestMemoryPerAddress))
	lcs := make([]listener.Config, len(g.cfg.Listeners))
	for i, l := range g.cfg.Listeners {
		lcs[i] = listener.Config{
			Name: l.Name, Dispatcher: g.broker, Logger: g.log,
			MaxFrameSize: lim.MaxFrameSize, MaxConnections: lim.MaxConnections, MaxInFlight: lim.MaxInFlight,
			MaxConnectionsPerAddress: lim.MaxConnectionsPerAddress, FirstRequestTimeout: lim.FirstRequestTimeout,
			IdleTimeout: lim.IdleTimeout, ReadTimeout: lim.ReadTimeout, WriteTimeout: lim.WriteTimeout,
			Budget: budget, Observer: g.observer(), LogLimiter: g.logLimit,
		}
		if err := g.security.Apply(l, &lcs[i]); err != nil {
			return fmt.Errorf("listener %s: %w", l.Name, err)
		}
	}
	var lns []net.Listener
	g.addrs = map[string]string{}
	for _, l := range g.cfg.Listeners {
		ln, err := net.Listen("tcp", l.Addr)
		if err != nil {
			for _, o := range lns {
				o.Close()
			}
			return fmt.Errorf("listener %s: %w", l.Name, err)
		}
		lns = append(lns, ln)
		g.addrs[l.Name] = ln.Addr().String()
		port := ln.Addr().(*net.TCPAddr).Port
		g.broker.SetAdvertisedPort(l.Name, port)
		adv := l.AdvertisedPort
		if adv == 0 {
			adv = port
		}
		g.log.Info("kafka listener ready", "listener", l.Name, "addr", ln.Addr().String(),
			"advertised", net.JoinHostPort(l.AdvertisedHost, strconv.Itoa(adv)), "node_id", g.cfg.NodeID)
	}
	g.failed = make(chan error, len(lns))
	g.watchBudget(budget)
	for i, ln := range lns {
		l := g.cfg.Listeners[i]
		srv := listener.New(lcs[i])
		g.servers = append(g.servers, srv)
		g.serving.Go(func() {
			if err := srv.Serve(ln); !errors.Is(err, listener.ErrServerClosed) {
				g.failed <- fmt.Errorf("listener %s: %w", l.Name, err)
			}
		})
	}
	g.ready.Store(true)
	return nil
}

// shutdown drains the listeners within the drain timeout.
func (g *Gateway) shutdown() {
	g.ready.Store(false)
	g.broker.BeginShutdown() // parked JoinGroup/SyncGroup requests must not hold up the drain
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Limits.ShutdownDrainTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, srv := range g.servers {
		wg.Go(func() {
			if err := srv.Shutdown(ctx); err != nil {
				g.log.Warn("drain timeout reached, closing remaining connections", "open", srv.OpenConnections())
			}
		})
	}
	wg.Wait()
	g.serving.Wait()
	g.closeTransactions() // before the data plane its markers go through
	g.broker.Close()
	g.closeOffsets()
	g.closeCluster()
}

// closeCluster leaves the gateway membership: the other gateways take over this one's
// partitions and groups.
func (g *Gateway) closeCluster() {
	if g.cluster != nil {
		g.cluster.close()
		g.cluster = nil
	}
}

// close releases the metrics endpoint, Iggy sessions and the dev server; safe after a
// partial start.
func (g *Gateway) close() {
	if g.stopReload != nil {
		g.stopReload()
		g.reloading.Wait()
		g.stopReload = nil
	}
	if g.http != nil {
		g.http.Close()
		g.httpServing.Wait()
		g.http = nil
	}
	if g.broker != nil {
		g.broker.Close() // after a failed start (a second Close does nothing): its background work ends
	}
	g.closeCluster() // after a failed start
	g.closeTransactions()
	if g.iggy != nil {
		if err := g.iggy.Close(); err != nil {
			g.log.Warn("closing the Iggy client", "err", err)
		}
		g.iggy = nil
	}
	if g.dev != nil {
		g.dev.Close()
		g.dev = nil
	}
	g.log.Info("stopped")
}

// startSecurity builds the listeners' TLS, SASL and client-certificate setup and starts the
// loop that reloads TLS files when they change and on SIGHUP (docs/SECURITY.md).
func (g *Gateway) startSecurity() error {
	var users auth.UserLookup
	if g.iggy != nil {
		users = g.iggy
	}
	sec, err := auth.NewSecurity(&g.cfg, users, g.log)
	if err != nil {
		return err
	}
	g.security = sec
	ctx, cancel := context.WithCancel(context.Background())
	g.stopReload = cancel
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	g.reloading.Go(func() {
		defer signal.Stop(hup)
		sec.Run(ctx, hup)
	})
	return nil
}
