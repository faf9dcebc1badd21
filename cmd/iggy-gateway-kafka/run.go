package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/iggygw/iggy-gateway-kafka/internal/broker"
	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/metrics"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // startup or runtime failure
	exitUsage   = 2 // invalid configuration
)

// run is the whole process: it returns when ctx is cancelled (after a graceful shutdown) or
// when startup fails.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	cfg, err := config.Load(args, environ)
	if errors.Is(err, config.ErrHelp) {
		config.WriteUsage(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "iggy-gateway-kafka: configuration error: %v\n", err)
		return exitUsage
	}
	log := newLogger(cfg, stderr)
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	g := &gateway{cfg: cfg, log: log}
	defer g.close()
	if err := g.start(ctx); err != nil {
		if ctx.Err() != nil {
			log.Info("startup interrupted by signal")
			return exitOK
		}
		log.Error("startup failed", "err", err)
		return exitFailure
	}
	select {
	case <-ctx.Done():
		log.Info("signal received, shutting down", "drain_timeout", cfg.Limits.ShutdownDrainTimeout)
	case err := <-g.serveErr:
		log.Error("listener failed", "err", err)
		g.shutdown()
		return exitFailure
	}
	g.shutdown()
	return exitOK
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// gateway is the running process state.
type gateway struct {
	cfg *config.Config
	log *slog.Logger

	dev      *memserver.Server
	iggy     *iggy.Client
	metrics  *metrics.Metrics
	http     *http.Server
	ready    atomic.Bool                 // Kafka listeners are serving
	bridge   atomic.Pointer[iggy.Client] // for readiness checks from the HTTP goroutines
	offsets  *offsets.Store              // committed offsets; nil without the bridge
	broker   *broker.Broker
	servers  []*listener.Server
	serveErr chan error
	serving  sync.WaitGroup
}

func (g *gateway) start(ctx context.Context) error {
	cfg := g.cfg
	if cfg.MetricsAddr != "" {
		if err := g.startMetrics(); err != nil {
			return err
		}
	}
	if cfg.Dev {
		if err := g.startDev(); err != nil {
			return err
		}
	}
	opts := broker.Options{Config: cfg, Logger: g.log, ClusterID: broker.ClusterID("storage-free")}
	if cfg.Bridge.Enabled {
		cl, err := connectBridge(ctx, cfg.Bridge, g.log)
		if err != nil {
			return err
		}
		g.iggy = cl
		g.bridge.Store(cl)
		if err := ensureStream(ctx, cl, cfg.DefaultStream, g.log); err != nil {
			return err
		}
		if g.offsets, err = loadOffsets(ctx, cl, g.log, durability.Mode(g.cfg.TopicFlush), g.offsetsOption); err != nil {
			return err
		}
		warnBufferedTopics(ctx, cl, cfg.DefaultStream, g.log)
		opts.Iggy = cl
		opts.Offsets = g.offsets
		opts.ClusterID = broker.ClusterID(clusterSeed(ctx, cl, cfg.Bridge.Addr))
	} else {
		g.log.Warn("bridge to Iggy is off: Kafka data and topic APIs store nothing and say so (set IGGY_KAFKA_BRIDGE_ENABLED=true, or --dev to try it out)")
	}
	b, err := broker.New(opts)
	if err != nil {
		return err
	}
	g.broker = b
	return g.listen()
}

// listen binds every listener before serving any, so a bad address fails startup cleanly.
func (g *gateway) listen() error {
	lim := g.cfg.Limits
	var lns []net.Listener
	for _, l := range g.cfg.Listeners {
		ln, err := net.Listen("tcp", l.Addr)
		if err != nil {
			for _, o := range lns {
				o.Close()
			}
			return fmt.Errorf("listener %s: %w", l.Name, err)
		}
		lns = append(lns, ln)
		port := ln.Addr().(*net.TCPAddr).Port
		g.broker.SetAdvertisedPort(l.Name, port)
		adv := l.AdvertisedPort
		if adv == 0 {
			adv = port
		}
		g.log.Info("kafka listener ready", "listener", l.Name, "addr", ln.Addr().String(),
			"advertised", net.JoinHostPort(l.AdvertisedHost, strconv.Itoa(adv)), "node_id", g.cfg.NodeID)
	}
	g.serveErr = make(chan error, len(lns))
	budget := listener.NewBudget(int64(lim.MaxRequestMemory)) // one for the whole process
	for i, ln := range lns {
		l := g.cfg.Listeners[i]
		srv := listener.New(listener.Config{
			Name: l.Name, Dispatcher: g.broker, Logger: g.log,
			MaxFrameSize: lim.MaxFrameSize, MaxConnections: lim.MaxConnections, MaxInFlight: lim.MaxInFlight,
			IdleTimeout: lim.IdleTimeout, ReadTimeout: lim.ReadTimeout, WriteTimeout: lim.WriteTimeout,
			Budget: budget, Observer: g.observer(),
		})
		g.servers = append(g.servers, srv)
		g.serving.Add(1)
		go func() {
			defer g.serving.Done()
			if err := srv.Serve(ln); !errors.Is(err, listener.ErrServerClosed) {
				g.serveErr <- fmt.Errorf("listener %s: %w", l.Name, err)
			}
		}()
	}
	g.ready.Store(true)
	return nil
}

// shutdown drains the listeners within the drain timeout.
func (g *gateway) shutdown() {
	g.ready.Store(false)
	g.broker.BeginShutdown() // parked JoinGroup/SyncGroup requests must not hold up the drain
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Limits.ShutdownDrainTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, srv := range g.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Shutdown(ctx); err != nil {
				g.log.Warn("drain timeout reached, closing remaining connections", "open", srv.OpenConnections())
			}
		}()
	}
	wg.Wait()
	g.serving.Wait()
	g.closeOffsets()
}

// close releases Iggy sessions and the dev server; safe after a partial start.
func (g *gateway) close() {
	if g.http != nil {
		g.http.Close()
		g.http = nil
	}
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
