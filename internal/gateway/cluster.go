package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/membership"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
)

// Timing of several gateways (docs/DEPLOYMENT.md, takeover).
const (
	// membershipInterval is how often each gateway reads the membership from Iggy.
	membershipInterval = time.Second
	// handoverDelay is how long a gateway that gains a coordinator-log partition waits
	// before it reads it: long enough for the previous owner, if alive, to see the same
	// membership and stop accepting writes for it.
	handoverDelay = 2*membershipInterval + time.Second
)

// cluster is this gateway's part in a deployment of several gateways: its membership
// session in Iggy, the placement the membership drives, and the coordinator-log partitions
// it owns.
type cluster struct {
	self    int32
	place   *placement.Cluster
	store   *offsets.Store
	log     *slog.Logger
	session *iggy.Conn
	members *membership.Membership

	// acquire loads a coordinator-log partition this gateway takes over (nil: store.Acquire;
	// tests inject faults here).
	acquire func(ctx context.Context, k int) error
	// delay replaces handoverDelay when not zero (tests).
	delay time.Duration

	mu      sync.Mutex
	pending map[int]context.CancelFunc // partitions being taken over
	taking  sync.WaitGroup
	closed  bool // no takeover starts any more
}

// startCluster opens the committed-offset store owning nothing, joins the membership and
// takes over the partitions this gateway owns. Without the bridge account's permission for
// the membership group, COORDINATOR_LOG_ENABLED=auto falls back to the fixed placement (the
// lowest node id coordinates every group) with a warning; true stops startup.
func (g *Gateway) startCluster(ctx context.Context, store *offsets.Store) (*cluster, error) {
	cfg := &g.cfg
	nodes := make([]placement.Node, 0, len(cfg.Peers))
	ids := make([]int32, 0, len(cfg.Peers))
	for _, p := range cfg.Peers {
		nodes = append(nodes, placement.Node{ID: p.ID, Host: p.Host, Port: int32(p.Port)})
		ids = append(ids, p.ID)
	}
	partitionOf := func(group string) int { return offsets.PartitionFor(group, offsets.DefaultPartitions) }
	c := &cluster{
		self: int32(cfg.NodeID), store: store, log: g.log.With("component", "cluster"),
		place:   placement.NewCluster(placement.ClusterConfig{Nodes: nodes, PartitionOf: partitionOf, Fixed: cfg.CoordinatorLog == "false"}),
		pending: make(map[int]context.CancelFunc),
	}
	g.fenceTo.Store(c)
	if err := store.Open(ctx); err != nil {
		return nil, err
	}
	shared := sharedSettings(cfg)
	c.log.Info("settings every gateway must share", "settings", shared, "fingerprint", fingerprint(shared))
	err := c.join(ctx, bridgeConfig(cfg.Bridge), ids, fingerprint(shared))
	switch {
	case err == nil:
	case cfg.CoordinatorLog == "auto" && iggy.IsCode(err, iggy.CodeUnauthorized):
		g.log.Warn("the bridge account may not join the gateway membership in Iggy: falling back to the lowest node id coordinating every group and being the controller (COORDINATOR_LOG_ENABLED=false); see docs/DEPLOYMENT.md for the permissions", "err", err)
		c.place = placement.NewCluster(placement.ClusterConfig{Nodes: nodes, PartitionOf: partitionOf, Fixed: true})
		c.update(c.place.Live())
	default:
		c.close()
		return nil, fmt.Errorf("joining the gateway membership in Iggy (see docs/DEPLOYMENT.md): %w", err)
	}
	return c, nil
}

// sharedSettings describes the settings that every gateway sharing the coordinator log must
// have alike (docs/DEPLOYMENT.md): where Kafka topic names live in Iggy (the stream and the
// topic map), whether groups are shared through the log or fixed on the lowest node id, and
// how many partitions the log has.
func sharedSettings(cfg *config.Config) string {
	coordination := "shared"
	if cfg.CoordinatorLog == "false" {
		coordination = "fixed"
	}
	return fmt.Sprintf("topics=%s coordination=%s log-partitions=%d", cfg.TopicMap, coordination, offsets.DefaultPartitions)
}

// fingerprint is a short hash of shared settings, which the membership publishes.
func fingerprint(settings string) string { return fmt.Sprintf("%016x", xxh3.HashString(settings)) }

// join opens the membership session and starts following the membership.
func (c *cluster) join(ctx context.Context, bridge iggy.Config, ids []int32, settings string) error {
	bridge.PoolSize = 1
	session, err := iggy.DialConn(ctx, bridge)
	if err != nil {
		return err
	}
	c.session = session
	c.members, err = membership.Start(ctx, membership.Config{
		API: session, Stream: iggylog.ReservedStream, Topic: offsets.DefaultTopic,
		Self: c.self, Nodes: ids, Settings: settings, Interval: membershipInterval, OnChange: c.update, Logger: c.log,
	})
	return err
}

// update applies a new membership: the placement answers from it at once; partitions this
// gateway lost are released at once, partitions it gained are taken over after the
// hand-over delay.
func (c *cluster) update(live []int32) {
	c.place.SetLive(live)
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range offsets.DefaultPartitions {
		mine := c.place.Owner(k) == c.self
		cancel, taking := c.pending[k]
		switch {
		case mine && !taking && !c.store.Owns(k):
			ctx, cancel := context.WithCancel(context.Background())
			c.pending[k] = cancel
			c.store.Claim(k)
			c.taking.Go(func() { c.takeOver(ctx, k) })
		case !mine && taking:
			cancel()
			delete(c.pending, k)
			c.store.Release(k)
		case !mine && c.store.Owns(k):
			c.store.Release(k)
			c.log.Info("coordinator log partition handed over", "partition", k, "owner", c.place.Owner(k))
		}
	}
}

// retake follows a fence (docs/COORDINATOR-LOG.md §7): the store gave partition k up because
// another gateway took it over while this one still wrote to it. If the membership this
// gateway sees still makes k its own (the other gateway acted on a membership this one has
// not seen yet, or has already left), it takes k over again after the hand-over delay;
// otherwise k is the other gateway's, and the next membership change decides. It runs on the
// store's writer goroutine and does not block.
func (c *cluster) retake(k int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, taking := c.pending[k]; c.closed || taking || c.place.Owner(k) != c.self {
		return
	}
	c.log.Warn("coordinator log partition taken over by another gateway although the membership makes it this gateway's; taking it back after the hand-over delay", "partition", k)
	ctx, cancel := context.WithCancel(context.Background())
	c.pending[k] = cancel
	c.store.Claim(k)
	c.taking.Go(func() { c.takeOver(ctx, k) })
}

// takeOver waits for the hand-over delay, then loads partition k, retrying until it is
// loaded or ownership moves again.
func (c *cluster) takeOver(ctx context.Context, k int) {
	defer func() {
		c.mu.Lock()
		if ctx.Err() == nil {
			delete(c.pending, k)
		}
		c.mu.Unlock()
	}()
	wait := c.delay
	if wait == 0 {
		wait = handoverDelay
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		start := time.Now()
		err := c.acquireSafe(ctx, k)
		if err == nil {
			c.log.Info("coordinator log partition owned", "partition", k, "load", time.Since(start).Round(time.Millisecond))
			return
		}
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("taking over a coordinator log partition failed; retrying", "partition", k, "err", err)
		wait = time.Second
	}
}

// acquireSafe loads partition k, with a panic recovered into its error (logged with its stack
// and counted, internal/supervise, component "takeover"): the attempt fails as an Iggy error
// would and is retried, rather than ending the process or leaving k claimed and never loaded.
func (c *cluster) acquireSafe(ctx context.Context, k int) (err error) {
	defer supervise.Recover(c.log, "takeover", &err)
	if c.acquire != nil {
		return c.acquire(ctx, k)
	}
	return c.store.Acquire(ctx, k)
}

// close leaves the membership (the session ends) and stops pending takeovers.
func (c *cluster) close() {
	if c.members != nil {
		c.members.Close()
	}
	if c.session != nil {
		_ = c.session.Close()
	}
	c.mu.Lock()
	c.closed = true
	for k, cancel := range c.pending {
		cancel()
		delete(c.pending, k)
	}
	c.mu.Unlock()
	c.taking.Wait()
}
