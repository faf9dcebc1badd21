package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/metrics"
)

// startMetrics serves /metrics, /healthz and /readyz. It starts before the bridge so that
// liveness answers while startup waits for Iggy.
func (g *Gateway) startMetrics() error {
	ln, err := net.Listen("tcp", g.cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("metrics endpoint: %w", err)
	}
	g.metrics = metrics.New()
	auth := metrics.Auth{Username: g.cfg.MetricsUsername, Password: g.cfg.MetricsPassword.Reveal(), BearerToken: g.cfg.MetricsBearerToken.Reveal()}
	g.http = &http.Server{Handler: metrics.Protect(g.metrics.Handler(g.readiness), auth), ReadHeaderTimeout: 10 * time.Second}
	srv := g.http
	g.httpServing.Go(func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			g.log.Error("metrics endpoint failed", "err", err)
		}
	})
	g.metricsAddr = ln.Addr().String()
	g.log.Info("metrics endpoint ready", "addr", g.metricsAddr, "authentication", auth.Username != "" || auth.BearerToken != "")
	return nil
}

func (g *Gateway) observer() listener.Observer {
	if g.metrics == nil {
		return nil
	}
	return g.metrics
}

// readiness: the Kafka listeners serve and, with the bridge, Iggy answers a ping.
func (g *Gateway) readiness(ctx context.Context) error {
	if !g.ready.Load() {
		return errors.New("the Kafka listeners are not serving (starting or shutting down)")
	}
	if cl := g.bridge.Load(); cl != nil {
		if err := cl.Ping(ctx); err != nil {
			return fmt.Errorf("ping to Iggy: %w", err)
		}
	}
	return nil
}
