package memserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// ClusterConfig configures an in-memory Iggy cluster: nodes that share one state, as a
// replicated Iggy 0.9 cluster looks to its clients (docs/DEPLOYMENT.md, "In-memory Iggy
// cluster").
type ClusterConfig struct {
	// Addrs are the client (TCP) addresses of the nodes, one per node; default three
	// "127.0.0.1:0". Node i is replica i, and the primary of view v is node v mod len(Addrs),
	// as in Iggy's VSR.
	Addrs []string
	// Name is the cluster name GetClusterMetadata reports; default "iggy-memserver-cluster".
	Name string
	// ElectionDelay is how long the cluster stays without a primary after the primary dies
	// (a real cluster needs its heartbeat timeout plus a view change: a few seconds); default
	// 2 s.
	ElectionDelay time.Duration

	// The rest applies to every node as in Config.
	RootUsername, RootPassword string
	Logger                     *slog.Logger
	Clock                      func() time.Time
}

// DefaultElectionDelay is ClusterConfig.ElectionDelay's default.
const DefaultElectionDelay = 2 * time.Second

// Cluster is a running in-memory Iggy cluster. Every node serves the same state: whatever the
// primary acknowledged is visible on every node at once. Only the primary applies writes;
// backups answer them as a real backup does (TransientNotAccepted, 58) and serve reads.
type Cluster struct {
	cfg   ClusterConfig
	nodes []*Server
	log   *slog.Logger

	// serving is the index of the node that applies writes now, -1 while the cluster has no
	// primary (its primary died and the election has not finished, or a majority is down).
	serving atomic.Int32
	// partPrimary is the node whose partition writes are admitted while it differs from the
	// metadata primary (SetPartitionPrimary), -1 when partitions follow the metadata primary.
	partPrimary atomic.Int32

	mu      sync.Mutex
	view    uint64 // the primary of view v is node v mod len(nodes)
	alive   []bool
	timer   *time.Timer // the pending election, nil when none
	elected chan struct{}
	closed  bool
}

// StartCluster starts the nodes of an in-memory cluster; node 0 is the first primary.
func StartCluster(cfg ClusterConfig) (*Cluster, error) {
	if len(cfg.Addrs) == 0 {
		cfg.Addrs = []string{"127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"}
	}
	if cfg.Name == "" {
		cfg.Name = "iggy-memserver-cluster"
	}
	if cfg.ElectionDelay <= 0 {
		cfg.ElectionDelay = DefaultElectionDelay
	}
	base, err := Config{RootUsername: cfg.RootUsername, RootPassword: cfg.RootPassword, Logger: cfg.Logger, Clock: cfg.Clock}.withDefaults()
	if err != nil {
		return nil, err
	}
	st := newState(base.Clock, base.RootUsername, base.RootPassword)
	c := &Cluster{cfg: cfg, alive: make([]bool, len(cfg.Addrs)), elected: make(chan struct{})}
	c.log = base.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	for i, addr := range cfg.Addrs {
		nc := base
		nc.Addr = addr
		s, err := start(nc, st, c, i)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("memserver: cluster node %d: %w", i, err)
		}
		c.nodes = append(c.nodes, s)
		c.alive[i] = true
	}
	c.serving.Store(0)
	c.partPrimary.Store(-1)
	return c, nil
}

// Addrs returns the client addresses of the nodes, in node order.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		out[i] = s.Addr()
	}
	return out
}

// Node returns node i.
func (c *Cluster) Node(i int) *Server { return c.nodes[i] }

// Primary returns the index of the node that accepts writes now, or -1 while there is none.
func (c *Cluster) Primary() int { return int(c.serving.Load()) }

// WaitPrimary waits until the cluster has a primary, or d passes; it returns the primary
// (-1 on timeout).
func (c *Cluster) WaitPrimary(d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		c.mu.Lock()
		p, ch := c.serving.Load(), c.elected
		c.mu.Unlock()
		if p >= 0 {
			return int(p)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return -1
		}
		select {
		case <-ch:
		case <-time.After(left):
		}
	}
}

// Kill stops node i as SIGKILL would: its listener closes and its connections drop. When it was
// the primary, the cluster has none until the survivors elect one after ElectionDelay (if a
// majority is alive). Meanwhile every node still reports the dead node as the leader, as real
// backups do until their view change starts.
func (c *Cluster) Kill(i int) {
	c.mu.Lock()
	if c.closed || !c.alive[i] {
		c.mu.Unlock()
		return
	}
	c.alive[i] = false
	if int(c.serving.Load()) == i {
		c.serving.Store(-1)
		c.scheduleElectionLocked()
	}
	c.mu.Unlock()
	c.nodes[i].kill()
	c.log.Warn("cluster node killed", "node", i, "addr", c.nodes[i].Addr())
}

// KillPrimary kills the current primary and returns its index (-1, and nothing killed, when
// the cluster has none).
func (c *Cluster) KillPrimary() int {
	p := c.Primary()
	if p >= 0 {
		c.Kill(p)
	}
	return p
}

// Restart brings killed node i back on its address. It rejoins as a backup (it is caught up at
// once, since the state is shared), and its return may complete a majority a pending election
// was waiting for.
func (c *Cluster) Restart(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.alive[i] {
		return nil
	}
	if err := c.nodes[i].restart(); err != nil {
		return fmt.Errorf("memserver: restart node %d: %w", i, err)
	}
	c.alive[i] = true
	if c.serving.Load() < 0 && c.timer == nil {
		c.scheduleElectionLocked()
	}
	c.log.Info("cluster node restarted as a backup", "node", i, "addr", c.nodes[i].Addr())
	return nil
}

// ChangeView moves the cluster to the next view whose primary is alive at once, while the old
// primary lives on as a backup: what a real cluster does when its primary was cut off from the
// others for a heartbeat timeout and comes back. It returns the new primary (-1, and nothing
// changed, without a primary or a majority).
func (c *Cluster) ChangeView() int {
	c.mu.Lock()
	if c.closed || c.serving.Load() < 0 {
		c.mu.Unlock()
		return -1
	}
	c.serving.Store(-1)
	c.mu.Unlock()
	c.elect()
	return c.Primary()
}

// scheduleElectionLocked starts the election timer unless one is pending.
func (c *Cluster) scheduleElectionLocked() {
	if c.timer != nil {
		return
	}
	c.timer = time.AfterFunc(c.cfg.ElectionDelay, c.elect)
}

// elect moves to the next view whose primary is alive, as a VSR view change does, provided a
// majority of the nodes is alive; otherwise it waits for a restart.
func (c *Cluster) elect() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer = nil
	if c.closed || c.serving.Load() >= 0 {
		return
	}
	n := len(c.nodes)
	up := 0
	for _, a := range c.alive {
		if a {
			up++
		}
	}
	if up <= n/2 {
		c.log.Warn("no majority alive: the cluster stays without a primary", "alive", up, "nodes", n)
		return
	}
	for v := c.view + 1; ; v++ {
		if p := int(v % uint64(n)); c.alive[p] {
			c.view = v
			c.serving.Store(int32(p))
			close(c.elected)
			c.elected = make(chan struct{})
			c.log.Info("cluster elected a new primary", "node", p, "view", v, "addr", c.nodes[p].Addr())
			return
		}
	}
}

// Close stops every node.
func (c *Cluster) Close() error {
	c.mu.Lock()
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.mu.Unlock()
	var errs []error
	for _, s := range c.nodes {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// isPrimary reports whether node i applies writes now.
func (c *Cluster) isPrimary(i int) bool { return int(c.serving.Load()) == i }

// SetPartitionPrimary makes node i the primary of every partition while the metadata primary
// (the roster's Leader) stays where it is; -1 makes partitions follow the metadata primary
// again. A real Iggy 0.9 cluster runs one consensus group per partition, each with a primary
// of its own (the node of its view), which is not always the roster's leader: a partition
// created after a failover starts in view 0, and a partition's view change may elect another
// node than the metadata group's. Here every partition moves together.
func (c *Cluster) SetPartitionPrimary(i int) { c.partPrimary.Store(int32(i)) }

// admits reports whether node i applies a request of operation op now: partition writes on the
// partition primary, everything else on the metadata primary.
func (c *Cluster) admits(i int, op uint8) bool {
	if p := c.partPrimary.Load(); p >= 0 && wire.IsPartitionOp(op) {
		return c.hasPrimary() && int(p) == i
	}
	return c.isPrimary(i)
}

// hasPrimary reports whether some node applies writes now.
func (c *Cluster) hasPrimary() bool { return c.serving.Load() >= 0 }

// metadata is GetClusterMetadata as every node of a real cluster answers it
// (core/server/src/cluster_meta.rs): one entry per roster node with its client ports (0 for a
// transport that is off: this server has TCP only), the primary of the current view marked
// Leader and the rest Follower, and every node Healthy (the real roster is configuration, not
// liveness: a dead node stays Healthy).
func (c *Cluster) metadata() wire.ClusterMetadata {
	c.mu.Lock()
	leader := int(c.view % uint64(len(c.nodes)))
	c.mu.Unlock()
	md := wire.ClusterMetadata{Name: c.cfg.Name, Nodes: make([]wire.ClusterNode, len(c.nodes))}
	for i, s := range c.nodes {
		host, port, _ := net.SplitHostPort(s.Addr())
		p, _ := strconv.Atoi(port)
		role := wire.NodeRoleFollower
		if i == leader {
			role = wire.NodeRoleLeader
		}
		md.Nodes[i] = wire.ClusterNode{
			Name: "iggy-node-" + strconv.Itoa(i), IP: host, TCPPort: uint16(p),
			Role: role, Status: wire.NodeStatusHealthy,
		}
	}
	return md
}
