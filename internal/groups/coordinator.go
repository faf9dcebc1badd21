package groups

import (
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Coordinator owns every classic group this gateway coordinates. It is safe for concurrent
// use.
type Coordinator struct {
	cfg Config

	mu     sync.Mutex // guards groups; taken before any group's mutex, never after
	groups map[string]*group
	// consumer holds the groups of the consumer protocol (KIP-848, consumer_group.go); an id
	// names a group of one type at a time.
	consumer map[string]*cgroup
	closed   atomic.Bool // Close was called: no timer is armed any more
}

// Close stops every timer the coordinator has armed (session expiries, join and sync
// deadlines, the initial rebalance delay) and arms none afterwards, so that nothing of a
// closed coordinator runs later. It does not answer parked JoinGroup and SyncGroup requests:
// they end with their contexts (the broker's BeginShutdown ends them before the listeners
// drain). Call it once the listeners have drained; later calls do nothing.
func (c *Coordinator) Close() {
	if c.closed.Swap(true) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.groups {
		g.mu.Lock()
		for dl := range g.timers {
			dl.cancel()
		}
		g.mu.Unlock()
	}
	c.closeConsumerGroups()
}

// New returns a Coordinator, or an error naming the invalid settings in cfg.
func New(cfg Config) (*Coordinator, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Coordinator{cfg: cfg, groups: make(map[string]*group), consumer: make(map[string]*cgroup)}, nil
}

// lockGroup returns the named group locked. With create it makes the group if absent
// (seeding its generation and protocol type from stored state); without, it returns nil when
// the group does not exist in memory.
func (c *Coordinator) lockGroup(name string, create bool) (*group, *kerr.Error) {
	for {
		c.mu.Lock()
		g := c.groups[name]
		if g == nil {
			if !create {
				c.mu.Unlock()
				return nil, nil
			}
			if len(c.groups)+len(c.consumer) >= c.cfg.MaxGroups {
				c.mu.Unlock()
				c.cfg.Logger.Warn("consumer group limit reached", "limit", c.cfg.MaxGroups, "group", name)
				return nil, kerr.CoordinatorNotAvailable
			}
			if err := c.classicMayCreate(name); err != nil {
				c.mu.Unlock()
				return nil, err
			}
			g = newGroup(c, name)
			if c.cfg.Stored != nil {
				g.protocolType, g.generation, _ = c.cfg.Stored.LookupGroup(name)
			}
			c.groups[name] = g
		}
		c.mu.Unlock()
		g.mu.Lock()
		if g.state != stateDead {
			return g, nil
		}
		// Dropped between the lookup and the lock: look again.
		g.mu.Unlock()
	}
}

// unlockAndMaybeDrop unlocks g and removes it from memory if nothing is left in it.
func (c *Coordinator) unlockAndMaybeDrop(g *group) {
	drop := g.droppable()
	g.mu.Unlock()
	if !drop {
		return
	}
	c.mu.Lock()
	g.mu.Lock()
	if g.droppable() && c.groups[g.name] == g {
		delete(c.groups, g.name)
		g.state = stateDead
	}
	g.mu.Unlock()
	c.mu.Unlock()
}

// checkGroupID validates a group id for the APIs that use group management, which require a
// non-empty id (Kafka allows the empty id only for the offset and admin APIs).
func (c *Coordinator) checkGroupID(id string, allowEmpty bool) *kerr.Error {
	if (id == "" && !allowEmpty) || len(id) > c.cfg.MaxIDBytes {
		return kerr.InvalidGroupID
	}
	return nil
}

// newMemberID returns "<prefix>-<uuid>" like Kafka: the prefix is the group.instance.id of a
// static member and the client id otherwise.
func newMemberID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
