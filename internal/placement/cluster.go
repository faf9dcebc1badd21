package placement

import (
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/zeebo/xxh3"
)

// Cluster is the placement of several gateways in front of one Iggy (docs/DEPLOYMENT.md).
// Every answer is a function of the live membership alone, so every gateway that sees the
// same membership gives the same answers:
//
//   - the owner of coordinator-log partition k is the live node with the highest rendezvous
//     score for k (or, with Fixed, the lowest configured node id);
//   - the controller is the owner of coordinator-log partition 0;
//   - the coordinator of group g is the owner of the partition g hashes to;
//   - the leader of partition p of topic t is the live node with the highest rendezvous
//     score for (t, p).
//
// Rendezvous (highest random weight) hashing moves only the keys of a node that leaves, and
// only the keys a joining node wins, so a membership change disturbs as little as it can.
type Cluster struct {
	nodes       map[int32]Node // every configured node, by id
	partitionOf func(group string) int
	fixed       int32 // with Fixed: the lowest configured id; else -1
	live        atomic.Pointer[[]int32]
	generation  atomic.Uint64 // changes of live
}

var _ Placement = (*Cluster)(nil)

// ClusterConfig configures a Cluster.
type ClusterConfig struct {
	// Nodes are every gateway of the deployment with the address it advertises.
	Nodes []Node
	// PartitionOf maps a group to its coordinator-log partition.
	PartitionOf func(group string) int
	// Fixed makes the lowest configured node id the coordinator of every group and the
	// controller, whatever the membership (coordinator log not shared).
	Fixed bool
}

// NewCluster returns a Cluster whose membership is every configured node until SetLive says
// otherwise.
func NewCluster(cfg ClusterConfig) *Cluster {
	c := &Cluster{nodes: make(map[int32]Node, len(cfg.Nodes)), partitionOf: cfg.PartitionOf, fixed: -1}
	ids := make([]int32, 0, len(cfg.Nodes))
	for _, n := range cfg.Nodes {
		c.nodes[n.ID] = n
		ids = append(ids, n.ID)
	}
	if cfg.Fixed && len(ids) > 0 {
		c.fixed = slices.Min(ids)
	}
	c.SetLive(ids)
	return c
}

// SetLive replaces the live membership; ids that are not configured are ignored.
func (c *Cluster) SetLive(ids []int32) {
	live := make([]int32, 0, len(ids))
	for _, id := range ids {
		if _, ok := c.nodes[id]; ok {
			live = append(live, id)
		}
	}
	slices.Sort(live)
	live = slices.Compact(live)
	if old := c.live.Swap(&live); old == nil || !slices.Equal(*old, live) {
		c.generation.Add(1)
	}
}

// Generation counts the changes of the live membership (see placement.Generation).
func (c *Cluster) Generation() uint64 { return c.generation.Load() }

// Live returns the live node ids, ascending.
func (c *Cluster) Live() []int32 { return slices.Clone(*c.live.Load()) }

// Brokers lists the live nodes. With nobody live (this gateway lost Iggy) it lists every
// configured node, so that clients still have somewhere to ask.
func (c *Cluster) Brokers(string) []Node {
	ids := *c.live.Load()
	if len(ids) == 0 {
		ids = slices.Sorted(func(yield func(int32) bool) {
			for id := range c.nodes {
				if !yield(id) {
					return
				}
			}
		})
	}
	out := make([]Node, 0, len(ids))
	for _, id := range ids {
		out = append(out, c.nodes[id])
	}
	return out
}

// Leader is the live node that leads partition of topic, or -1 when nobody is live.
func (c *Cluster) Leader(topic string, partition int32) int32 {
	return Rendezvous(topic+"\x00"+strconv.Itoa(int(partition)), *c.live.Load())
}

// Coordinator is the owner of the group's coordinator-log partition; its id is -1 when
// nobody is live.
func (c *Cluster) Coordinator(_ string, group string) Node {
	id := c.Owner(c.partitionOf(group))
	if n, ok := c.nodes[id]; ok {
		return n
	}
	return Node{ID: -1, Host: "", Port: -1}
}

// Controller is the owner of coordinator-log partition 0.
func (c *Cluster) Controller() int32 { return c.Owner(0) }

// Owner is the node that owns coordinator-log partition k (-1: nobody is live).
func (c *Cluster) Owner(k int) int32 {
	if c.fixed >= 0 {
		return c.fixed
	}
	return Rendezvous("coordinator-log\x00"+strconv.Itoa(k), *c.live.Load())
}

// Rendezvous returns the node of ids with the highest score for key (-1 for no ids): the
// same for every caller with the same ids, whatever their order.
func Rendezvous(key string, ids []int32) int32 {
	best, bestScore := int32(-1), uint64(0)
	buf := make([]byte, 0, len(key)+12)
	for _, id := range ids {
		buf = strconv.AppendInt(append(append(buf[:0], key...), 0), int64(id), 10)
		score := xxh3.Hash(buf)
		if best < 0 || score > bestScore || score == bestScore && id < best {
			best, bestScore = id, score
		}
	}
	return best
}
