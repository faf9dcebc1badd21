package groups

import (
	"bytes"
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type state int8

const (
	stateEmpty state = iota
	statePreparingRebalance
	stateCompletingRebalance
	stateStable
	stateDead // dropped from the coordinator; never visible to clients as a live group
)

// String returns Kafka's name for the state, as DescribeGroups and ListGroups report it.
func (s state) String() string {
	switch s {
	case stateEmpty:
		return "Empty"
	case statePreparingRebalance:
		return "PreparingRebalance"
	case stateCompletingRebalance:
		return "CompletingRebalance"
	case stateStable:
		return "Stable"
	default:
		return "Dead"
	}
}

type group struct {
	c    *Coordinator
	name string

	mu           sync.Mutex
	state        state
	generation   int32
	protocolType string
	protocol     string // selected protocol of the current generation
	leader       string
	members      map[string]*member
	pending      map[string]*deadline // member ids handed out with MEMBER_ID_REQUIRED
	static       map[string]string    // group.instance.id -> member id
	votes        map[string]int       // protocol name -> number of members supporting it
	pendingSync  map[string]struct{}  // members of this generation that have not synced yet
	blobBytes    int                  // metadata and assignment bytes held by members
	nextSeq      uint64

	joinTimer      *deadline
	syncTimer      *deadline
	timers         map[*deadline]struct{} // armed deadlines, stopped by Coordinator.Close
	initialDelay   bool                   // the join barrier is in its initial-rebalance-delay phase
	newMemberAdded bool                   // a member arrived during the current initial-delay window
}

type member struct {
	id               string
	seq              uint64 // join order; gives deterministic listings and leader succession
	instanceID       *string
	client           Client
	protocols        []protocol
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	assignment       []byte
	isNew            bool // joined without a member id and has not completed a barrier yet

	join    chan joinResult // non-nil while a JoinGroup is parked (awaiting join)
	sync    chan syncResult // non-nil while a SyncGroup is parked (awaiting sync)
	session *deadline
}

type protocol struct {
	name     string
	metadata []byte
}

func newGroup(c *Coordinator, name string) *group {
	return &group{
		c:       c,
		name:    name,
		members: make(map[string]*member),
		pending: make(map[string]*deadline),
		static:  make(map[string]string),
		votes:   make(map[string]int),
	}
}

func (g *group) droppable() bool {
	return g.state == stateEmpty && len(g.members) == 0 && len(g.pending) == 0
}

// deadline is a cancellable timer whose callback runs with the group locked. A callback that
// races with cancel sees done and does nothing. Its group keeps it in timers while armed, so
// that Coordinator.Close can stop it.
type deadline struct {
	g    *group
	stop func() bool
	done bool
}

// after arms fn to run after d with the group locked; once the coordinator is closed it arms
// nothing. Callers hold g.mu.
func (g *group) after(d time.Duration, fn func()) *deadline {
	dl := &deadline{g: g}
	if g.c.closed.Load() {
		dl.done = true
		return dl
	}
	if g.timers == nil {
		g.timers = make(map[*deadline]struct{})
	}
	g.timers[dl] = struct{}{}
	dl.stop = g.c.cfg.Clock.AfterFunc(d, func() {
		g.mu.Lock()
		if dl.done || g.state == stateDead {
			g.mu.Unlock()
			return
		}
		dl.done = true
		delete(g.timers, dl)
		fn()
		g.c.unlockAndMaybeDrop(g)
	})
	return dl
}

// cancel stops the deadline; callers hold its group's mu.
func (dl *deadline) cancel() {
	if dl != nil && !dl.done {
		dl.done = true
		delete(dl.g.timers, dl)
		dl.stop()
	}
}

// sortedMembers returns the members in join order.
func (g *group) sortedMembers() []*member {
	ms := make([]*member, 0, len(g.members))
	for _, m := range g.members {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *member) int { return cmp.Compare(a.seq, b.seq) })
	return ms
}

func (g *group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

func metadataBytes(ps []protocol) int {
	n := 0
	for _, p := range ps {
		n += len(p.metadata)
	}
	return n
}

// supportsProtocols reports whether a member with these protocols may join: any non-empty
// set for a group without members, otherwise the same protocol type and at least one protocol
// every current member supports.
func (g *group) supportsProtocols(protocolType string, ps []protocol) bool {
	if len(g.members) == 0 {
		return true
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range ps {
		if g.votes[p.name] == len(g.members) {
			return true
		}
	}
	return false
}

// selectProtocol picks the protocol of the next generation as Kafka does: among the
// protocols every member supports, each member votes for the one it prefers most, and the
// most votes win. Ties go to the leader's preference order (Kafka breaks them arbitrarily).
func (g *group) selectProtocol() string {
	votes := make(map[string]int)
	for _, m := range g.members {
		for _, p := range m.protocols {
			if g.votes[p.name] == len(g.members) {
				votes[p.name]++
				break
			}
		}
	}
	best, bestVotes := "", 0
	if leader := g.members[g.leader]; leader != nil {
		for _, p := range leader.protocols {
			if v := votes[p.name]; v > bestVotes {
				best, bestVotes = p.name, v
			}
		}
	}
	return best
}

func (m *member) metadataFor(name string) []byte {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata
		}
	}
	return nil
}

func (m *member) sameProtocols(ps []protocol) bool {
	return slices.EqualFunc(m.protocols, ps, func(a, b protocol) bool {
		return a.name == b.name && bytes.Equal(a.metadata, b.metadata)
	})
}

func (g *group) setProtocols(m *member, ps []protocol) {
	for _, p := range m.protocols {
		g.votes[p.name]--
		if g.votes[p.name] == 0 {
			delete(g.votes, p.name)
		}
	}
	g.blobBytes += metadataBytes(ps) - metadataBytes(m.protocols)
	m.protocols = ps
	for _, p := range ps {
		g.votes[p.name]++
	}
}

func (g *group) setAssignment(m *member, a []byte) {
	g.blobBytes += len(a) - len(m.assignment)
	m.assignment = a
}

// addMember adds a member that joined without a known member id and parks its JoinGroup.
func (g *group) addMember(m *member, protocolType string, ps []protocol) chan joinResult {
	if len(g.members) == 0 {
		g.protocolType = protocolType
	}
	g.nextSeq++
	m.seq = g.nextSeq
	m.isNew = true
	g.members[m.id] = m
	g.setProtocols(m, ps)
	if m.instanceID != nil {
		g.static[*m.instanceID] = m.id
	}
	if g.leader == "" {
		g.leader = m.id
	}
	if g.initialDelay {
		g.newMemberAdded = true
	}
	g.scheduleSession(m)
	return g.parkJoin(m)
}

// parkJoin makes m await the join barrier. A JoinGroup it was already waiting in is answered
// with REBALANCE_IN_PROGRESS so that no caller waits forever (Kafka drops such a callback).
func (g *group) parkJoin(m *member) chan joinResult {
	if m.join != nil {
		m.join <- errJoin(m.id, kerr.RebalanceInProgress)
	}
	m.join = make(chan joinResult, 1)
	return m.join
}

// removeMember removes m without starting a rebalance. Parked requests of m are answered
// with UNKNOWN_MEMBER_ID so that a still-live client rejoins.
func (g *group) removeMember(m *member) {
	m.session.cancel()
	if m.join != nil {
		m.join <- errJoin("", kerr.UnknownMemberID)
		m.join = nil
	}
	if m.sync != nil {
		m.sync <- syncResult{code: kerr.UnknownMemberID.Code}
		m.sync = nil
	}
	g.setProtocols(m, nil)
	g.setAssignment(m, nil)
	delete(g.members, m.id)
	delete(g.pendingSync, m.id)
	if m.instanceID != nil && g.static[*m.instanceID] == m.id {
		delete(g.static, *m.instanceID)
	}
	if g.leader == m.id {
		g.leader = ""
		if ms := g.sortedMembers(); len(ms) > 0 {
			g.leader = ms[0].id
		}
	}
}

// removeMemberAndRebalance removes m and moves the group on, as Kafka does when a member
// leaves or its session expires.
func (g *group) removeMemberAndRebalance(m *member) {
	g.removeMember(m)
	g.removedMembers()
}

func (g *group) scheduleSession(m *member) {
	m.session.cancel()
	d := m.sessionTimeout
	if m.isNew {
		d = g.c.cfg.NewMemberJoinTimeout
	}
	m.session = g.after(d, func() { g.sessionExpired(m) })
}

func (g *group) sessionExpired(m *member) {
	if g.members[m.id] != m {
		return
	}
	// A member parked in a barrier counts as alive (its session is rescheduled when the
	// barrier completes), except a new member, which is bounded by NewMemberJoinTimeout.
	if !m.isNew && (m.join != nil || m.sync != nil) {
		return
	}
	g.c.cfg.Logger.Info("consumer group member session expired", "group", g.name, "member", m.id)
	g.removeMemberAndRebalance(m)
}

func (g *group) addPending(id string, session time.Duration) {
	g.pending[id] = g.after(session, func() {
		delete(g.pending, id)
		g.tryCompleteJoin()
	})
}

func (g *group) removePending(id string) bool {
	dl, ok := g.pending[id]
	if ok {
		dl.cancel()
		delete(g.pending, id)
	}
	return ok
}

// prepareRebalance starts a join barrier.
func (g *group) prepareRebalance() {
	if g.state == stateCompletingRebalance {
		g.failSyncs(kerr.RebalanceInProgress)
	}
	g.clearPendingSync()
	fromEmpty := g.state == stateEmpty
	g.state = statePreparingRebalance
	g.joinTimer.cancel()
	if delay := g.c.cfg.InitialRebalanceDelay; fromEmpty && delay > 0 {
		g.initialDelay = true
		g.newMemberAdded = false
		g.scheduleInitialDelay(delay, max(g.rebalanceTimeout()-delay, 0))
		return
	}
	g.joinTimer = g.after(g.rebalanceTimeout(), g.completeJoin)
	g.tryCompleteJoin()
}

// scheduleInitialDelay waits d; if members kept arriving meanwhile and rebalance time
// remains, it waits again (Kafka's InitialDelayedJoin), otherwise it completes the barrier.
func (g *group) scheduleInitialDelay(d, remaining time.Duration) {
	g.joinTimer = g.after(d, func() {
		if g.newMemberAdded && remaining > 0 {
			g.newMemberAdded = false
			next := min(g.c.cfg.InitialRebalanceDelay, remaining)
			g.scheduleInitialDelay(next, remaining-next)
			return
		}
		g.completeJoin()
	})
}

// tryCompleteJoin completes the join barrier once every member has rejoined and no member id
// handed out with MEMBER_ID_REQUIRED is still outstanding.
func (g *group) tryCompleteJoin() {
	if g.state != statePreparingRebalance || g.initialDelay || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.join == nil {
			return
		}
	}
	g.completeJoin()
}

// completeJoin ends the join barrier: dynamic members that did not rejoin are removed, the
// generation is bumped, a protocol is selected and every parked JoinGroup is answered.
func (g *group) completeJoin() {
	g.joinTimer.cancel()
	g.initialDelay = false
	for _, m := range g.sortedMembers() {
		if m.join == nil && m.instanceID == nil {
			g.removeMember(m)
		}
	}
	if len(g.members) > 0 && !g.electJoinedLeader() {
		// Only static members that have not rejoined remain. Like Kafka, wait another
		// rebalance timeout; their sessions expire meanwhile if they are gone.
		g.joinTimer = g.after(g.rebalanceTimeout(), g.completeJoin)
		return
	}
	g.generation++
	if g.generation < 0 {
		g.generation = 1
	}
	g.clearPendingSync()
	if len(g.members) == 0 {
		g.state = stateEmpty
		g.protocol = ""
		g.notifyGeneration()
		return
	}
	g.protocol = g.selectProtocol()
	g.state = stateCompletingRebalance
	g.notifyGeneration()
	g.c.cfg.Logger.Info("consumer group rebalanced", "group", g.name, "generation", g.generation,
		"protocol", g.protocol, "members", len(g.members), "leader", g.leader)
	g.pendingSync = make(map[string]struct{}, len(g.members))
	for _, m := range g.sortedMembers() {
		if m.join != nil {
			m.join <- g.joinResult(m)
			m.join = nil
		}
		m.isNew = false
		g.scheduleSession(m)
		g.pendingSync[m.id] = struct{}{}
	}
	generation := g.generation
	g.syncTimer = g.after(g.rebalanceTimeout(), func() { g.expirePendingSync(generation) })
}

// electJoinedLeader keeps the leader if it rejoined, else picks the first member that did.
func (g *group) electJoinedLeader() bool {
	if l := g.members[g.leader]; l != nil && l.join != nil {
		return true
	}
	for _, m := range g.sortedMembers() {
		if m.join != nil {
			g.leader = m.id
			return true
		}
	}
	return false
}

// expirePendingSync removes the members of generation that never sent SyncGroup within the
// rebalance timeout, and rebalances.
func (g *group) expirePendingSync(generation int32) {
	if generation != g.generation || (g.state != stateCompletingRebalance && g.state != stateStable) || len(g.pendingSync) == 0 {
		return
	}
	for id := range g.pendingSync {
		if m := g.members[id]; m != nil {
			g.c.cfg.Logger.Info("consumer group member did not sync in time", "group", g.name, "member", id)
			g.removeMember(m)
		}
	}
	g.prepareRebalance()
}

func (g *group) clearPendingSync() {
	g.pendingSync = nil
	g.syncTimer.cancel()
	g.syncTimer = nil
}

func (g *group) syncedBy(id string) {
	delete(g.pendingSync, id)
	if len(g.pendingSync) == 0 {
		g.clearPendingSync()
	}
}

// failSyncs drops the assignments of the generation and answers every parked SyncGroup with
// err.
func (g *group) failSyncs(err *kerr.Error) {
	for _, m := range g.members {
		g.setAssignment(m, nil)
		if m.sync != nil {
			m.sync <- syncResult{code: err.Code}
			m.sync = nil
			g.scheduleSession(m)
		}
	}
}

func (g *group) notifyGeneration() {
	if g.c.cfg.OnGeneration == nil {
		return
	}
	g.c.cfg.OnGeneration(GenerationEvent{
		Group:        g.name,
		Generation:   g.generation,
		ProtocolType: g.protocolType,
		Protocol:     g.protocol,
		Leader:       g.leader,
		Members:      len(g.members),
	})
}

// validateMember checks that id is a current member, and that a static member's instance id
// still maps to it (FENCED_INSTANCE_ID when another member id took the instance over).
func (g *group) validateMember(id string, instanceID *string) *kerr.Error {
	if instanceID != nil {
		known, ok := g.static[*instanceID]
		if !ok {
			return kerr.UnknownMemberID
		}
		if known != id {
			return kerr.FencedInstanceID
		}
		return nil
	}
	if _, ok := g.members[id]; !ok {
		return kerr.UnknownMemberID
	}
	return nil
}

func (g *group) memberList() []kmsg.JoinGroupResponseMember {
	ms := g.sortedMembers()
	out := make([]kmsg.JoinGroupResponseMember, 0, len(ms))
	for _, m := range ms {
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = m.id
		jm.InstanceID = m.instanceID
		jm.ProtocolMetadata = m.metadataFor(g.protocol)
		out = append(out, jm)
	}
	return out
}
