package groups

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ConsumerConfig configures the consumer group protocol (KIP-848), where the coordinator
// assigns partitions (docs/CONSUMER-GROUPS.md, "Consumer protocol").
type ConsumerConfig struct {
	// SessionTimeout is Kafka's group.consumer.session.timeout.ms: a member that sends no
	// heartbeat for this long is fenced and its partitions go to others. In this protocol the
	// coordinator decides it, not the member.
	SessionTimeout time.Duration
	// HeartbeatInterval is Kafka's group.consumer.heartbeat.interval.ms, told to members in
	// every heartbeat response.
	HeartbeatInterval time.Duration
	// RegexRefreshInterval bounds how long the topics matched by regex subscriptions may be
	// out of date (Kafka refreshes them at most every 10 seconds too).
	RegexRefreshInterval time.Duration
	// DefaultAssignor is used when no member names one (Kafka's first entry of
	// group.consumer.assignors, "uniform").
	DefaultAssignor string
}

// DefaultConsumerConfig returns Kafka's defaults.
func DefaultConsumerConfig() ConsumerConfig {
	return ConsumerConfig{
		SessionTimeout:       45 * time.Second,
		HeartbeatInterval:    5 * time.Second,
		RegexRefreshInterval: 10 * time.Second,
		DefaultAssignor:      AssignorUniform,
	}
}

func (c ConsumerConfig) validate() error {
	var errs []error
	if c.SessionTimeout <= 0 || c.HeartbeatInterval <= 0 || c.HeartbeatInterval >= c.SessionTimeout {
		errs = append(errs, fmt.Errorf("consumer protocol: heartbeat interval %v must be > 0 and below the session timeout %v", c.HeartbeatInterval, c.SessionTimeout))
	}
	if c.RegexRefreshInterval <= 0 {
		errs = append(errs, errors.New("consumer protocol: RegexRefreshInterval must be > 0"))
	}
	if !knownAssignor(c.DefaultAssignor) {
		errs = append(errs, fmt.Errorf("consumer protocol: unknown assignor %q (uniform or range)", c.DefaultAssignor))
	}
	return errors.Join(errs...)
}

// TopicMetadata is what the assignors need of a topic, and its id, which the consumer
// protocol names topics by.
type TopicMetadata struct {
	ID         [16]byte
	Partitions int32
}

// Topics is what the consumer group protocol needs to know about topics; the broker implements
// it over Iggy for the connection of the heartbeating member. Its calls may do I/O and are
// never made with a group locked.
type Topics interface {
	// Describe returns the named topics that exist (absent names do not).
	Describe(ctx context.Context, names []string) (map[string]TopicMetadata, error)
	// All returns every topic the member may see, which regex subscriptions match against.
	All(ctx context.Context) (map[string]TopicMetadata, error)
}

// memberState is where a member is in its reconciliation with the target assignment, as
// Kafka names it.
type memberState int8

const (
	memberStable               memberState = iota // has its whole target at the assignment epoch
	memberUnrevokedPartitions                     // must give up partitions before moving on
	memberUnreleasedPartitions                    // waits for partitions others still own
)

// Member epochs with a meaning of their own in ConsumerGroupHeartbeat requests.
const (
	epochJoin        = 0
	epochLeave       = -1
	epochStaticLeave = -2 // a static member going away for a while: its partitions wait for it
)

// cgroup is a consumer group of the consumer protocol. The group epoch moves whenever what the
// assignment depends on changes (members, subscriptions, subscribed topics' partitions); the
// target assignment is recomputed for it; each member then reaches its target at its own pace,
// revoking before anything it gives up is handed to another (ownedBy).
type cgroup struct {
	c    *Coordinator
	name string

	mu              sync.Mutex
	dead            bool // deleted: a caller holding it must look again
	epoch           int32
	assignmentEpoch int32
	assignor        string                  // the assignor of the current target
	target          map[string]partitionSet // member id -> target assignment
	members         map[string]*cmember
	static          map[string]string         // instance id -> member id
	ownedBy         map[topicPartition]string // partitions a member holds or still revokes
	topics          map[string]TopicMetadata  // the subscribed topics the target was computed from
	ids             map[string][16]byte       // topic name -> id, for every topic seen
	all             map[string]TopicMetadata  // every topic, for regexes; nil when stale
	allTimer        *cdeadline
	timers          map[*cdeadline]struct{}
}

type cmember struct {
	id               string
	instanceID       *string
	rackID           *string
	client           Client
	epoch            int32
	prevEpoch        int32
	state            memberState
	rebalanceTimeout time.Duration
	names            []string // subscribed topic names, sorted
	regex            string   // subscribed regex as sent ("" for none)
	compiled         *regexp.Regexp
	assignor         string // preferred server assignor ("" for the group's default)
	assigned         partitionSet
	revoking         partitionSet
	session          *cdeadline
	revokeBy         *cdeadline
}

// cdeadline is a cancellable timer whose callback runs with its group locked.
type cdeadline struct {
	g    *cgroup
	stop func() bool
	done bool
}

// after arms fn to run after d with the group locked; once the coordinator is closed it arms
// nothing. Callers hold g.mu.
func (g *cgroup) after(d time.Duration, fn func()) *cdeadline {
	dl := &cdeadline{g: g}
	if g.c.closed.Load() {
		dl.done = true
		return dl
	}
	g.timers[dl] = struct{}{}
	dl.stop = g.c.cfg.Clock.AfterFunc(d, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if dl.done || g.dead {
			return
		}
		dl.done = true
		delete(g.timers, dl)
		fn()
	})
	return dl
}

func (dl *cdeadline) cancel() {
	if dl != nil && !dl.done {
		dl.done = true
		delete(dl.g.timers, dl)
		dl.stop()
	}
}

func newCGroup(c *Coordinator, name string) *cgroup {
	return &cgroup{
		c: c, name: name,
		target:  make(map[string]partitionSet),
		members: make(map[string]*cmember),
		static:  make(map[string]string),
		ownedBy: make(map[topicPartition]string),
		topics:  make(map[string]TopicMetadata),
		ids:     make(map[string][16]byte),
		timers:  make(map[*cdeadline]struct{}),
	}
}

// stateName is the group state as ConsumerGroupDescribe and ListGroups report it.
func (g *cgroup) stateName() string {
	switch {
	case len(g.members) == 0:
		return "Empty"
	case g.epoch != g.assignmentEpoch:
		return "Assigning"
	}
	for _, m := range g.members {
		if m.epoch >= 0 && (m.epoch != g.assignmentEpoch || m.state != memberStable) {
			return "Reconciling"
		}
	}
	return "Stable"
}

func (g *cgroup) sortedMembers() []*cmember {
	ms := make([]*cmember, 0, len(g.members))
	for _, m := range g.members {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *cmember) int {
		if a.id < b.id {
			return -1
		}
		if a.id > b.id {
			return 1
		}
		return 0
	})
	return ms
}

// bump moves the group epoch: a new target assignment is due.
func (g *cgroup) bump() {
	g.epoch++
	if g.epoch <= 0 {
		g.epoch = 1
	}
}

// subscribedTopics returns the existing topics m subscribes to, by name or by regex, from the
// known topics.
func (g *cgroup) subscribedTopics(m *cmember, known map[string]TopicMetadata) []string {
	var out []string
	for _, t := range m.names {
		if _, ok := known[t]; ok {
			out = append(out, t)
		}
	}
	if m.compiled != nil {
		for t := range g.all {
			if _, ok := known[t]; ok && m.compiled.MatchString(t) && !slices.Contains(m.names, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

// preferredAssignor is the assignor most members ask for (ties to the name first in order),
// or the configured default when none asks.
func (g *cgroup) preferredAssignor() string {
	votes := map[string]int{}
	for _, m := range g.members {
		if m.assignor != "" {
			votes[m.assignor]++
		}
	}
	best, n := g.c.cfg.Consumer.DefaultAssignor, 0
	for _, name := range []string{AssignorUniform, AssignorRange} {
		if votes[name] > n {
			best, n = name, votes[name]
		}
	}
	return best
}

// computeTarget computes the target assignment of the current group epoch.
func (g *cgroup) computeTarget() {
	spec := assignSpec{
		subscribed: make(map[string][]string, len(g.members)),
		partitions: make(map[string]int32, len(g.topics)),
		previous:   g.target,
	}
	for t, md := range g.topics {
		spec.partitions[t] = md.Partitions
	}
	for _, m := range g.sortedMembers() {
		spec.members = append(spec.members, m.id)
		spec.subscribed[m.id] = g.subscribedTopics(m, g.topics)
	}
	g.assignor = g.preferredAssignor()
	g.target = assign(g.assignor, spec)
	g.assignmentEpoch = g.epoch
	g.c.cfg.Logger.Info("consumer group target assignment", "group", g.name, "epoch", g.epoch,
		"assignor", g.assignor, "members", len(g.members))
}

// reconcile moves m towards its target assignment as Kafka's protocol does: partitions leaving
// m are revoked first (the member keeps its epoch until it reports them gone, owned being
// the partitions it says it owns, nil when the request did not say); partitions joining m are
// given only once no other member holds them.
func (g *cgroup) reconcile(m *cmember, owned partitionSet) {
	if m.epoch < 0 {
		return
	}
	if m.state == memberUnrevokedPartitions {
		if owned == nil {
			return
		}
		for p := range m.revoking {
			if _, still := owned[p]; still {
				return
			}
		}
		g.release(m, m.revoking)
		m.revoking = nil
		m.state = memberStable
		m.revokeBy.cancel()
		m.revokeBy = nil
	}
	if m.state == memberStable && m.epoch == g.assignmentEpoch {
		return
	}
	target := g.target[m.id]
	keep, revoke, add := partitionSet{}, partitionSet{}, partitionSet{}
	unreleased := false
	for p := range m.assigned {
		if _, ok := target[p]; ok {
			keep[p] = struct{}{}
		} else {
			revoke[p] = struct{}{}
		}
	}
	for p := range target {
		if _, ok := m.assigned[p]; ok {
			continue
		}
		if owner, held := g.ownedBy[p]; held && owner != m.id {
			unreleased = true
			continue
		}
		add[p] = struct{}{}
	}
	if len(revoke) > 0 {
		m.assigned, m.revoking = keep, revoke
		m.state = memberUnrevokedPartitions
		epoch := m.epoch
		m.revokeBy.cancel()
		m.revokeBy = g.after(m.rebalanceTimeout, func() {
			if g.members[m.id] == m && m.state == memberUnrevokedPartitions && m.epoch == epoch {
				g.c.cfg.Logger.Info("consumer group member did not revoke in time: fenced", "group", g.name, "member", m.id)
				g.removeMember(m)
			}
		})
		return
	}
	for p := range add {
		keep[p] = struct{}{}
		g.ownedBy[p] = m.id
	}
	m.assigned = keep
	m.prevEpoch, m.epoch = m.epoch, g.assignmentEpoch
	m.state = memberStable
	if unreleased {
		m.state = memberUnreleasedPartitions
	}
}

// release frees partitions m held, so that their next owner may take them.
func (g *cgroup) release(m *cmember, ps partitionSet) {
	for p := range ps {
		if g.ownedBy[p] == m.id {
			delete(g.ownedBy, p)
		}
	}
}

// removeMember takes m out of the group (it left, or was fenced): its partitions are free and
// the group epoch moves so that others get them.
func (g *cgroup) removeMember(m *cmember) {
	m.session.cancel()
	m.revokeBy.cancel()
	g.release(m, m.assigned)
	g.release(m, m.revoking)
	delete(g.members, m.id)
	delete(g.target, m.id)
	if m.instanceID != nil && g.static[*m.instanceID] == m.id {
		delete(g.static, *m.instanceID)
	}
	g.bump()
}

// touch restarts m's session: a member that stops heartbeating is fenced after it.
func (g *cgroup) touch(m *cmember) {
	m.session.cancel()
	m.session = g.after(g.c.cfg.Consumer.SessionTimeout, func() {
		if g.members[m.id] == m {
			g.c.cfg.Logger.Info("consumer group member session expired: fenced", "group", g.name, "member", m.id)
			g.removeMember(m)
		}
	})
}

// compileSubscriptionRegex compiles a SubscribedTopicRegex. Kafka uses RE2/J, whose syntax is
// RE2's, and matches whole topic names.
func compileSubscriptionRegex(s string) (*regexp.Regexp, *kerr.Error) {
	re, err := regexp.Compile("^(?:" + s + ")$")
	if err != nil {
		return nil, kerr.InvalidRegularExpression
	}
	return re, nil
}
