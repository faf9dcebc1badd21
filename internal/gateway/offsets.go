package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
	"github.com/iggygw/iggy-gateway-kafka/internal/epochlog"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicstate"
)

// loadOffsets opens the committed-offset store over the coordinator log in Iggy and rebuilds
// its view (latest checkpoint plus the records after it) before any Kafka connection is
// accepted, so that no client is ever told "nothing committed" for a group that has commits.
func loadOffsets(ctx context.Context, api iggylog.API, log *slog.Logger, flush durability.Mode, option func(*offsets.Config), loaded func(time.Duration)) (*offsets.Store, error) {
	ilog := coordinatorLog(api, flush)
	store, err := newOffsets(ilog, log, option)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := store.Load(ctx); err != nil {
		hint := ""
		switch {
		case iggy.IsCode(err, iggy.CodeUnauthorized):
			hint = " (the bridge account needs permission to create and write the stream)"
		case errors.Is(err, offsets.ErrCorrupt):
			hint = " (IGGY_KAFKA_COORDINATOR_LOG_RECOVERY=skip starts anyway, losing the corrupt records; see docs/COORDINATOR-LOG.md)"
		}
		return nil, fmt.Errorf("loading committed offsets from Iggy stream %q, topic %q%s: %w",
			iggylog.ReservedStream, offsets.DefaultTopic, hint, err)
	}
	took := time.Since(start)
	log.Info("committed offsets loaded", "iggy_stream", iggylog.ReservedStream, "iggy_topic", offsets.DefaultTopic,
		"duration", took.Round(time.Millisecond))
	loaded(took)
	if f := ilog.FlushInForce(); !f.WritesEachAck() {
		log.Warn("the coordinator log's Iggy topic does not write each acknowledged commit before answering: an Iggy crash can lose committed offsets. "+durability.Fix,
			"iggy_stream", iggylog.ReservedStream, "iggy_topic", offsets.DefaultTopic, "flush", f.String())
	}
	return store, nil
}

// openEpochLog opens the leader-epoch log (creating its topic on first use); the broker
// reads it (Broker.LoadEpochs).
func openEpochLog(ctx context.Context, api iggylog.API, log *slog.Logger, flush durability.Mode) (*epochlog.Log, error) {
	ilog := iggylog.NewTopic(api, iggylog.ReservedStream, epochlog.Topic, epochlog.Partitions)
	ilog.Flush = flush // a bump is acknowledged to no one, but it must not vanish in an Iggy crash
	el := epochlog.New(ilog, log.With("component", "epochs"))
	if err := el.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("opening the leader-epoch log in Iggy stream %q, topic %q: %w", iggylog.ReservedStream, epochlog.Topic, err)
	}
	return el, nil
}

// coordinatorLog is the Iggy topic the committed-offset store keeps its log in, created (when
// missing) with the gateway's flush mode.
func coordinatorLog(api iggylog.API, flush durability.Mode) *iggylog.Topic {
	ilog := iggylog.NewTopic(api, iggylog.ReservedStream, offsets.DefaultTopic, offsets.DefaultPartitions)
	ilog.Flush = flush
	return ilog
}

// newOffsets returns the committed-offset store over the coordinator log, not loaded yet.
func newOffsets(ilog *iggylog.Topic, log *slog.Logger, option func(*offsets.Config)) (*offsets.Store, error) {
	cfg := offsets.DefaultConfig(ilog)
	cfg.Logger = log.With("component", "offsets")
	option(&cfg)
	return offsets.New(cfg)
}

// loadTopicState opens the topic-state log (stored topic configs, DeleteRecords' log start
// offsets) next to the coordinator log and reads it before any Kafka connection is accepted.
// The controller's writes carry its owner epoch of coordinator-log partition 0 (the
// controller is that partition's owner), so a superseded controller's late writes are
// ignored (docs/TOPIC-CONFIGS.md).
func loadTopicState(ctx context.Context, api iggylog.API, log *slog.Logger, flush durability.Mode, coordinator *offsets.Store) (*topicstate.Store, error) {
	ilog := iggylog.NewTopic(api, iggylog.ReservedStream, topicstate.DefaultTopic, 1)
	ilog.Flush = flush
	store := topicstate.New(ilog, log.With("component", "topicstate"))
	store.SetControllerEpoch(func() uint64 { return coordinator.Epoch(0) })
	if err := store.Load(ctx); err != nil {
		return nil, fmt.Errorf("loading topic state from Iggy stream %q, topic %q: %w", iggylog.ReservedStream, topicstate.DefaultTopic, err)
	}
	return store, nil
}

// offsetsOption applies the coordinator-log settings to the store's configuration.
func (g *Gateway) offsetsOption(c *offsets.Config) {
	c.Recovery, _ = offsets.ParseRecovery(g.cfg.CoordinatorLogRecovery) // config validated it
	c.Node = int32(g.cfg.NodeID)
	// Fencing protects a hand-over between the gateways BROKERS lists; a gateway configured
	// alone has nobody to hand over to (offsets.Config.Unfenced).
	c.Unfenced = len(g.cfg.Peers) == 0
	c.OnFenced = func(k int) {
		if cl := g.fenceTo.Load(); cl != nil {
			cl.retake(k)
		}
	}
	if g.metrics != nil {
		c.OnRecovery = g.metrics.CoordinatorLogRecovered
	}
}

// offsetsCloseTimeout bounds the checkpoint written at shutdown.
const offsetsCloseTimeout = 10 * time.Second

// closeOffsets writes a checkpoint of what changed since the last one, so the next start
// replays nothing. Call it once no request can commit any more.
func (g *Gateway) closeOffsets() {
	if g.offsets == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), offsetsCloseTimeout)
	defer cancel()
	if err := g.offsets.Close(ctx); err != nil {
		g.log.Warn("writing the committed-offset checkpoint at shutdown failed; the next start replays more of the coordinator log", "err", err)
	}
	g.offsets = nil
}
