package groups

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// lockConsumerGroup returns the named consumer group locked. With create it makes the group if
// absent. A classic group with members owns the id: GROUP_ID_NOT_FOUND, as Kafka answers a
// consumer-protocol request for a classic group (one group type per id).
func (c *Coordinator) lockConsumerGroup(name string, create bool) (*cgroup, *kerr.Error) {
	for {
		c.mu.Lock()
		if cl := c.groups[name]; cl != nil {
			cl.mu.Lock()
			busy := !cl.droppable()
			cl.mu.Unlock()
			if busy {
				c.mu.Unlock()
				return nil, kerr.GroupIDNotFound
			}
		}
		g := c.consumer[name]
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
			g = newCGroup(c, name)
			c.consumer[name] = g
		}
		c.mu.Unlock()
		g.mu.Lock()
		if !g.dead {
			return g, nil
		}
		g.mu.Unlock() // deleted between the lookup and the lock: look again
	}
}

// classicMayCreate is called by lockGroup, with c.mu held, before it creates a classic group:
// a consumer group with members owns the id (INCONSISTENT_GROUP_PROTOCOL, as Kafka answers a
// classic JoinGroup for it); an empty one gives way, as Kafka converts an empty group.
func (c *Coordinator) classicMayCreate(name string) *kerr.Error {
	g := c.consumer[name]
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.members) > 0 {
		return kerr.InconsistentGroupProtocol
	}
	g.kill()
	delete(c.consumer, name)
	return nil
}

// kill marks g deleted and stops its timers. Callers hold c.mu and g.mu.
func (g *cgroup) kill() {
	g.dead = true
	for dl := range g.timers {
		dl.cancel()
	}
}

// closeConsumerGroups stops the timers of every consumer group (Coordinator.Close).
func (c *Coordinator) closeConsumerGroups() {
	for _, g := range c.consumer {
		g.mu.Lock()
		for dl := range g.timers {
			dl.cancel()
		}
		g.mu.Unlock()
	}
}

// topicSnapshot is what a heartbeat learned of topics before locking the group.
type topicSnapshot struct {
	asked     map[string]bool
	described map[string]TopicMetadata
	all       map[string]TopicMetadata // nil unless listed
}

func (s *topicSnapshot) covers(names []string, needAll bool) bool {
	if needAll && s.all == nil {
		return false
	}
	for _, n := range names {
		if !s.asked[n] {
			return false
		}
	}
	return true
}

func (s *topicSnapshot) fill(ctx context.Context, topics Topics, names []string, needAll bool) error {
	if needAll {
		all, err := topics.All(ctx)
		if err != nil {
			return err
		}
		s.all = all
	}
	described, err := topics.Describe(ctx, names)
	if err != nil {
		return err
	}
	s.asked = make(map[string]bool, len(names))
	for _, n := range names {
		s.asked[n] = true
	}
	s.described = described
	return nil
}

// heartbeatAttempts bounds how often a heartbeat looks topics up again because the group's
// subscriptions changed while it did.
const heartbeatAttempts = 4

// ConsumerGroupHeartbeat handles a ConsumerGroupHeartbeat request (KIP-848): joining (member
// epoch 0), heartbeating and reconciling (the member's epoch), leaving (-1) and a static
// member's temporary leave (-2). topics tells the subscribed topics' partitions and ids; it is
// called before the group is locked (docs/CONSUMER-GROUPS.md, "Consumer protocol").
func (c *Coordinator) ConsumerGroupHeartbeat(ctx context.Context, req *kmsg.ConsumerGroupHeartbeatRequest, client Client, topics Topics) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	fail := func(err *kerr.Error, msg string) *kmsg.ConsumerGroupHeartbeatResponse {
		resp.ErrorCode = err.Code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp
	}
	if err, msg := c.checkConsumerHeartbeat(req); err != nil {
		return fail(err, msg)
	}
	memberID := req.MemberID
	if memberID == "" { // v0 join: the coordinator names the member (v1+ members name themselves)
		memberID = newUUID()
	}
	var snap topicSnapshot
	for range heartbeatAttempts {
		g, err := c.lockConsumerGroup(req.Group, req.MemberEpoch == epochJoin)
		switch {
		case err == kerr.GroupIDNotFound:
			return fail(err, "group "+req.Group+" is not a consumer group")
		case err != nil:
			return fail(err, "")
		case g == nil:
			// Membership is kept in memory: after a restart of the coordinator, members learn
			// they must join again (Kafka, which keeps it in a log, would know them).
			return fail(kerr.UnknownMemberID, "")
		}
		names, needAll := g.topicNeeds(req)
		if req.MemberEpoch < 0 || snap.covers(names, needAll) {
			out := g.heartbeat(req, memberID, client, &snap, resp)
			g.mu.Unlock()
			return out
		}
		g.mu.Unlock()
		if err := snap.fill(ctx, topics, names, needAll); err != nil {
			c.cfg.Logger.Warn("consumer group heartbeat: looking up topics failed", "group", req.Group, "err", err)
			return fail(kerr.CoordinatorLoadInProgress, "")
		}
	}
	return fail(kerr.CoordinatorLoadInProgress, "subscriptions kept changing")
}

// checkConsumerHeartbeat validates a request as Kafka does before looking at the group.
func (c *Coordinator) checkConsumerHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) (*kerr.Error, string) {
	invalid := func(msg string) (*kerr.Error, string) { return kerr.InvalidRequest, msg }
	switch {
	case req.Group == "":
		return invalid("GroupId can't be empty.")
	case len(req.Group) > c.cfg.MaxIDBytes:
		return kerr.InvalidGroupID, ""
	case req.MemberID == "" && (req.Version >= 1 || req.MemberEpoch != epochJoin):
		return invalid("MemberId can't be empty.")
	case len(req.MemberID) > c.cfg.MaxIDBytes:
		return invalid("MemberId is too long.")
	case req.InstanceID != nil && (*req.InstanceID == "" || len(*req.InstanceID) > c.cfg.MaxIDBytes):
		return invalid("InstanceId can't be empty or too long.")
	case req.RackID != nil && (*req.RackID == "" || len(*req.RackID) > c.cfg.MaxIDBytes):
		return invalid("RackId can't be empty or too long.")
	case req.MemberEpoch < epochStaticLeave:
		return invalid("MemberEpoch is invalid.")
	case req.MemberEpoch == epochStaticLeave && req.InstanceID == nil:
		return invalid("InstanceId can't be null when leaving temporarily.")
	case req.RebalanceTimeoutMillis < -1:
		return invalid("RebalanceTimeoutMs is invalid.")
	case req.SubscribedTopicNames != nil && req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "":
		return invalid("SubscribedTopicNames and SubscribedTopicRegex can't both be set.")
	}
	if req.MemberEpoch == epochJoin {
		switch {
		case req.RebalanceTimeoutMillis == -1:
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		case req.Topics == nil || len(req.Topics) > 0:
			return invalid("TopicPartitions must be empty when (re-)joining.")
		case req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil:
			return invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
		}
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "" {
		if _, err := compileSubscriptionRegex(*req.SubscribedTopicRegex); err != nil {
			return err, "SubscribedTopicRegex is not a valid RE2/J regular expression."
		}
	}
	if req.ServerAssignor != nil && !knownAssignor(*req.ServerAssignor) {
		return kerr.UnsupportedAssignor, "ServerAssignor " + *req.ServerAssignor + " is not supported (uniform, range)."
	}
	for _, n := range req.SubscribedTopicNames {
		if len(n) > 249 { // Kafka's longest topic name: nothing to look up
			return invalid("a subscribed topic name is longer than 249 characters")
		}
	}
	return nil, ""
}

// topicNeeds returns the topic names the heartbeat needs described (every member's subscribed
// names, with the request's) and whether every topic must be listed (a regex subscription
// and no fresh listing).
func (g *cgroup) topicNeeds(req *kmsg.ConsumerGroupHeartbeatRequest) ([]string, bool) {
	set := map[string]struct{}{}
	regex := req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != ""
	for _, m := range g.members {
		for _, n := range m.names {
			set[n] = struct{}{}
		}
		regex = regex || m.compiled != nil
	}
	for _, n := range req.SubscribedTopicNames {
		set[n] = struct{}{}
	}
	names := slices.Sorted(maps.Keys(set))
	return names, regex && g.all == nil
}

// heartbeat serves a checked request with the topics it needs in snap. Callers hold g.mu.
func (g *cgroup) heartbeat(req *kmsg.ConsumerGroupHeartbeatRequest, memberID string, client Client, snap *topicSnapshot, resp *kmsg.ConsumerGroupHeartbeatResponse) *kmsg.ConsumerGroupHeartbeatResponse {
	fail := func(err *kerr.Error, msg string) *kmsg.ConsumerGroupHeartbeatResponse {
		resp.ErrorCode = err.Code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp
	}
	resp.MemberID = &memberID
	resp.HeartbeatIntervalMillis = int32(g.c.cfg.Consumer.HeartbeatInterval.Milliseconds())

	m := g.members[memberID]
	if m != nil && req.InstanceID != nil && (m.instanceID == nil || *m.instanceID != *req.InstanceID) {
		return fail(kerr.FencedInstanceID, "")
	}
	switch req.MemberEpoch {
	case epochLeave:
		if m == nil {
			return fail(kerr.UnknownMemberID, "")
		}
		g.c.cfg.Logger.Info("consumer group member left", "group", g.name, "member", memberID)
		g.removeMember(m)
		resp.MemberEpoch = epochLeave
		return resp
	case epochStaticLeave:
		if m == nil {
			return fail(kerr.UnknownMemberID, "")
		}
		// Its partitions wait for the instance to come back (under a new member id) until its
		// session expires, as Kafka keeps them.
		m.epoch = epochStaticLeave
		m.revokeBy.cancel()
		resp.MemberEpoch = epochStaticLeave
		return resp
	case epochJoin:
		var err *kerr.Error
		if m, err = g.join(memberID, req); err != nil {
			return fail(err, "")
		}
	default:
		if m == nil {
			return fail(kerr.UnknownMemberID, "")
		}
		owned := g.ownedFromRequest(req.Topics)
		if req.MemberEpoch > m.epoch {
			return fail(kerr.FencedMemberEpoch, "the member epoch is greater than the coordinator's")
		}
		// A member that missed the response moving it on comes back with its previous epoch
		// and a subset of its partitions: Kafka accepts it.
		if req.MemberEpoch < m.epoch && (req.MemberEpoch != m.prevEpoch || owned == nil || !subset(owned, m.assigned)) {
			return fail(kerr.FencedMemberEpoch, "the member epoch is smaller than the coordinator's")
		}
	}
	before := m.assigned.clone()
	g.subscribe(m, req, client)

	if snap.all != nil {
		g.all = snap.all
		g.allTimer.cancel()
		g.allTimer = g.after(g.c.cfg.Consumer.RegexRefreshInterval, func() { g.all = nil })
	}
	known := maps.Clone(snap.described)
	if known == nil {
		known = map[string]TopicMetadata{}
	}
	for t, md := range g.all {
		known[t] = md
	}
	for t, md := range known {
		g.ids[t] = md.ID
	}
	subscribed := make(map[string]TopicMetadata)
	for _, o := range g.members {
		for _, t := range g.subscribedTopics(o, known) {
			subscribed[t] = known[t]
		}
	}
	if !maps.Equal(subscribed, g.topics) {
		g.topics = subscribed
		g.bump()
	}
	if g.epoch != g.assignmentEpoch {
		g.computeTarget()
	}
	var owned partitionSet
	if req.MemberEpoch == epochJoin {
		owned = partitionSet{}
	} else {
		owned = g.ownedFromRequest(req.Topics)
	}
	g.reconcile(m, owned)
	g.touch(m)

	resp.MemberEpoch = m.epoch
	full := req.RebalanceTimeoutMillis != -1 && (req.SubscribedTopicNames != nil || req.SubscribedTopicRegex != nil) && req.Topics != nil
	if req.MemberEpoch == epochJoin || full || !before.equal(m.assigned) {
		resp.Assignment = g.assignmentOf(m.assigned)
	}
	return resp
}

// join admits a member with epoch 0: a new member, a member that lost its state (it owns
// nothing now), or a static member taking over its instance's place and partitions.
func (g *cgroup) join(memberID string, req *kmsg.ConsumerGroupHeartbeatRequest) (*cmember, *kerr.Error) {
	if req.InstanceID != nil {
		if prevID, ok := g.static[*req.InstanceID]; ok && prevID != memberID {
			prev := g.members[prevID]
			if prev.epoch != epochStaticLeave {
				return nil, kerr.UnreleasedInstanceID
			}
			if _, taken := g.members[memberID]; taken {
				return nil, kerr.UnreleasedInstanceID
			}
			// The instance is back: the new member id takes over its assignment, with no
			// new group epoch (KIP-848 static membership).
			prev.session.cancel()
			prev.revokeBy.cancel()
			m := &cmember{id: memberID, instanceID: prev.instanceID, assigned: prev.assigned, revoking: prev.revoking,
				state: prev.state, names: prev.names, regex: prev.regex, compiled: prev.compiled, assignor: prev.assignor}
			for p, owner := range g.ownedBy {
				if owner == prevID {
					g.ownedBy[p] = memberID
				}
			}
			g.target[memberID] = g.target[prevID]
			delete(g.target, prevID)
			delete(g.members, prevID)
			g.members[memberID] = m
			g.static[*req.InstanceID] = memberID
			g.c.cfg.Logger.Info("consumer group static member rejoined", "group", g.name, "instance", *req.InstanceID, "member", memberID, "previous", prevID)
			return m, nil
		}
	}
	if m := g.members[memberID]; m != nil {
		// The member starts over: it owns nothing, and gets its target again.
		m.prevEpoch, m.epoch = 0, epochJoin
		return m, nil
	}
	if len(g.members) >= g.c.cfg.MaxGroupSize {
		return nil, kerr.GroupMaxSizeReached
	}
	m := &cmember{id: memberID, instanceID: req.InstanceID, assigned: partitionSet{}}
	g.members[memberID] = m
	if req.InstanceID != nil {
		g.static[*req.InstanceID] = memberID
	}
	g.bump()
	g.c.cfg.Logger.Info("consumer group member joined", "group", g.name, "member", memberID, "epoch", g.epoch)
	return m, nil
}

// subscribe records what the request says of the member; a changed subscription or assignor
// moves the group epoch.
func (g *cgroup) subscribe(m *cmember, req *kmsg.ConsumerGroupHeartbeatRequest, client Client) {
	m.client = client
	if req.RebalanceTimeoutMillis >= 0 {
		m.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	if req.RackID != nil {
		m.rackID = req.RackID
	}
	changed := false
	if req.SubscribedTopicNames != nil {
		names := slices.Compact(slices.Sorted(slices.Values(req.SubscribedTopicNames)))
		if !slices.Equal(names, m.names) || m.names == nil {
			m.names = names
			changed = true
		}
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != m.regex {
		m.regex = *req.SubscribedTopicRegex
		m.compiled = nil
		if m.regex != "" {
			m.compiled, _ = compileSubscriptionRegex(m.regex) // checked by checkConsumerHeartbeat
		}
		changed = true
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != m.assignor {
		m.assignor = *req.ServerAssignor
		changed = true
	}
	if changed {
		g.bump()
	}
}

// ownedFromRequest turns the partitions a member says it owns (by topic id) into a set; nil
// when the request did not say. Topics the coordinator does not know are left out.
func (g *cgroup) ownedFromRequest(topics []kmsg.ConsumerGroupHeartbeatRequestTopic) partitionSet {
	if topics == nil {
		return nil
	}
	byID := make(map[[16]byte]string, len(g.ids))
	for name, id := range g.ids {
		byID[id] = name
	}
	out := partitionSet{}
	for _, t := range topics {
		name, ok := byID[t.TopicID]
		if !ok {
			continue
		}
		for _, p := range t.Partitions {
			out[topicPartition{name, p}] = struct{}{}
		}
	}
	return out
}

func subset(a, b partitionSet) bool {
	for p := range a {
		if _, ok := b[p]; !ok {
			return false
		}
	}
	return true
}

// assignmentOf is an assignment as the heartbeat response carries it, by topic id.
func (g *cgroup) assignmentOf(ps partitionSet) *kmsg.ConsumerGroupHeartbeatResponseAssignment {
	a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
	a.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
	var cur *kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic
	last := ""
	for _, p := range ps.sorted() {
		if cur == nil || p.topic != last {
			t := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			t.TopicID = g.ids[p.topic]
			a.Topics = append(a.Topics, t)
			cur, last = &a.Topics[len(a.Topics)-1], p.topic
		}
		cur.Partitions = append(cur.Partitions, p.partition)
	}
	return &a
}

// newUUID returns a random version 4 UUID as text, the member ids of the consumer protocol.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
