package gateway

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/metrics"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
)

// Rate limit of each kind of repeatable log line (docs/OPERATIONS.md, "Logs").
const (
	logLinesPerSecond = 10
	logLineBurst      = 50
)

// logSuppressed is the limiter's hook into /metrics, nil without metrics.
func (g *Gateway) logSuppressed() func(string) {
	if g.metrics == nil {
		return nil
	}
	return g.metrics.LogSuppressed
}

// bridgeObserver receives the Iggy client's events: metrics, and the log line that tells an
// operator what to check when Iggy starts refusing the bridge account.
type bridgeObserver struct {
	g       *Gateway
	started atomic.Bool // before, connectBridge reports a rejected login itself
}

func (g *Gateway) bridgeObserver() *bridgeObserver { return &bridgeObserver{g: g} }

func (o *bridgeObserver) CommandDone(command string, d time.Duration, outcome iggy.Outcome) {
	if m := o.g.metrics; m != nil {
		m.CommandDone(command, d, outcome)
	}
}

// rejectedLoginHint is what to check when Iggy refuses the bridge account after startup.
const rejectedLoginHint = "Iggy refuses the bridge account's login; Kafka clients get retriable errors until it accepts it again. " +
	"Check that the account exists in Iggy with this password (IGGY_KAFKA_IGGY_USERNAME, IGGY_KAFKA_IGGY_PASSWORD) and is active: " +
	"an Iggy 0.9 server restarted without its default-root-credentials option no longer accepts iggy/iggy. " +
	"Use a dedicated bridge user (docs/OPERATIONS.md, section 2)"

func (o *bridgeObserver) LoginRejected(err error) {
	g := o.g
	if g.metrics != nil {
		g.metrics.LoginRejected(err)
	}
	if !o.started.Load() {
		return
	}
	if ok, suppressed := g.logLimit.Allow("iggy_login_rejected"); ok {
		g.log.Error(rejectedLoginHint, "iggy_addr", g.cfg.Bridge.Addr, "username", g.cfg.Bridge.Username,
			"err", err, "suppressed_before", suppressed, "event", "iggy_login_rejected")
	}
}

// PrimaryChanged logs one line per move of the bridge to another Iggy node and records it
// (iggy.PrimaryObserver; docs/DEPLOYMENT.md, "An Iggy cluster").
func (o *bridgeObserver) PrimaryChanged(from, to string, resume time.Duration) {
	g := o.g
	if g.metrics != nil {
		g.metrics.PrimaryChanged(from, to, resume)
	}
	if from == "" {
		g.log.Info("found the Iggy primary", "iggy_primary", to, "event", "iggy_primary_found")
		return
	}
	g.log.Warn("the Iggy primary moved: the bridge follows it", "iggy_primary", to, "previous", from,
		"without_primary", resume, "event", "iggy_failover")
}

// watchBridge exports the Iggy pool's state, the Iggy primary and the coordinator log's size.
func (g *Gateway) watchBridge(cl *iggy.Client) {
	if g.metrics == nil {
		return
	}
	if p := cl.Primary(); p != "" {
		// A client given one address never reports finding it: that address is the primary.
		g.metrics.PrimaryChanged("", p, 0)
	}
	g.metrics.WatchPool(cl.PoolStats)
	g.metrics.WatchCoordinatorLog((&logSize{api: cl, log: g.log}).read)
}

// groupLagTimeout bounds the Iggy reads of one scrape's consumer-group lag.
const groupLagTimeout = 5 * time.Second

// watchGroups exports consumer-group state and lag, computed at each scrape.
func (g *Gateway) watchGroups() {
	if g.metrics == nil || g.offsets == nil {
		return
	}
	b := g.broker
	g.metrics.WatchGroups(func() []metrics.GroupLag {
		ctx, cancel := context.WithTimeout(context.Background(), groupLagTimeout)
		defer cancel()
		lags := b.GroupLags(ctx, metrics.MaxGroupLabels)
		out := make([]metrics.GroupLag, len(lags))
		for i, l := range lags {
			out[i] = metrics.GroupLag{Group: l.Group, State: l.State, Lag: l.Lag, Partitions: l.Partitions}
		}
		return out
	})
}

// watchTailCache exports the broker's tail cache counters and contents.
func (g *Gateway) watchTailCache() {
	if g.metrics == nil {
		return
	}
	b := g.broker
	g.metrics.WatchTailCache(func() metrics.TailCacheStats {
		s := b.Data().TailCacheStats()
		return metrics.TailCacheStats{Hits: s.Hits, Misses: s.Misses, Evictions: s.Evictions, Resets: s.Resets,
			Invalidations: s.Invalidations, Shrinks: s.Shrinks, Batches: s.Batches, Bytes: s.Bytes, Limit: s.Limit}
	})
}

// watchBudget exports the request-memory budget that every listener shares.
func (g *Gateway) watchBudget(b *listener.Budget) {
	if g.metrics == nil {
		return
	}
	g.metrics.WatchBudget(b.Usage)
}

// offsetsLoaded records the coordinator log's load time.
func (g *Gateway) offsetsLoaded(d time.Duration) {
	if g.metrics != nil {
		g.metrics.CoordinatorLogLoaded(d)
	}
}

// logSize reads the coordinator log topic's size from Iggy, at most every logSizeMaxAge and
// within logSizeTimeout, so that scrapes stay cheap and bounded.
type logSize struct {
	api interface {
		GetTopic(ctx context.Context, stream, topic iggy.Identifier) (*iggy.Topic, error)
	}
	log *slog.Logger

	mu             sync.Mutex
	at             time.Time
	bytes, records uint64
}

const (
	logSizeMaxAge  = 15 * time.Second
	logSizeTimeout = time.Second
)

func (s *logSize) read() (bytes, records uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.at) < logSizeMaxAge {
		return s.bytes, s.records
	}
	s.at = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), logSizeTimeout)
	defer cancel()
	t, err := s.api.GetTopic(ctx, iggy.Name(iggylog.ReservedStream), iggy.Name(offsets.DefaultTopic))
	if err != nil {
		s.log.Debug("reading the coordinator log's size failed", "err", err)
		return s.bytes, s.records // the last known size
	}
	s.bytes, s.records = t.SizeBytes, t.MessagesCount
	return s.bytes, s.records
}
