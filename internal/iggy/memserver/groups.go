package memserver

import (
	"slices"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// group is a server-side consumer group. Membership belongs to a session: it ends on leave,
// logout or disconnect. Every membership or partition change bumps the generation, which
// SyncConsumerGroup reports so members know to re-sync.
type group struct {
	id         uint32
	name       string
	generation uint64
	members    slab[member]
}

type member struct {
	id         uint32
	session    uint64
	partitions []uint32
}

// groupView is a snapshot of a group for encoding.
type groupView struct {
	wire.ConsumerGroup
}

func (g *group) view(partitions int) groupView {
	v := groupView{wire.ConsumerGroup{
		ID:              g.id,
		Name:            g.name,
		PartitionsCount: uint32(partitions),
		MembersCount:    uint32(g.members.len()),
	}}
	g.members.each(func(id uint32, m *member) {
		v.Members = append(v.Members, wire.ConsumerGroupMember{ID: id, Partitions: slices.Clone(m.partitions)})
	})
	return v
}

func (g *group) memberOf(session uint64) *member {
	var found *member
	g.members.each(func(_ uint32, m *member) {
		if m.session == session {
			found = m
		}
	})
	return found
}

// owns reports whether session is a member that owns partition p.
func (g *group) owns(session uint64, p uint32) bool {
	m := g.memberOf(session)
	return m != nil && slices.Contains(m.partitions, p)
}

// rebalance spreads all partitions round-robin over the members in member-id order (the real
// server's eager rebalance on leave, disconnect and repartition).
func (g *group) rebalance(partitions int) {
	g.generation++
	var ms []*member
	g.members.each(func(_ uint32, m *member) {
		m.partitions = m.partitions[:0]
		ms = append(ms, m)
	})
	if len(ms) == 0 {
		return
	}
	for p := range partitions {
		m := ms[p%len(ms)]
		m.partitions = append(m.partitions, uint32(p))
	}
}

// join adds a member for session and hands it work the way the real server's cooperative
// rebalance does when nothing is in flight: unassigned partitions go to idle members, then
// members holding more than their fair share give the excess (their highest partitions) to
// idle members. Joining twice is a no-op.
func (g *group) join(session uint64, partitions int) {
	if g.memberOf(session) != nil {
		return
	}
	m := &member{session: session}
	m.id = g.members.insert(m)
	g.generation++

	assigned := map[uint32]bool{}
	g.members.each(func(_ uint32, m *member) {
		for _, p := range m.partitions {
			assigned[p] = true
		}
	})
	idleMembers := func() []*member {
		var idle []*member
		g.members.each(func(_ uint32, m *member) {
			if len(m.partitions) == 0 {
				idle = append(idle, m)
			}
		})
		return idle
	}
	if idle := idleMembers(); len(idle) > 0 {
		i := 0
		for p := range partitions {
			if !assigned[uint32(p)] {
				idle[i%len(idle)].partitions = append(idle[i%len(idle)].partitions, uint32(p))
				i++
			}
		}
	}

	idle := idleMembers()
	if len(idle) == 0 || partitions == 0 {
		return
	}
	fair, extra := partitions/g.members.len(), partitions%g.members.len()
	type move struct {
		p    uint32
		from *member
	}
	var excess []move
	g.members.each(func(_ uint32, m *member) {
		allowed := fair
		if extra > 0 {
			allowed = fair + 1
		}
		if len(m.partitions) > fair && extra > 0 {
			extra--
		}
		for i := len(m.partitions) - 1; i >= allowed; i-- {
			excess = append(excess, move{m.partitions[i], m})
		}
	})
	for i, mv := range excess {
		to := idle[i%len(idle)]
		mv.from.partitions = slices.DeleteFunc(mv.from.partitions, func(p uint32) bool { return p == mv.p })
		to.partitions = append(to.partitions, mv.p)
	}
}

// leave removes session's member and rebalances; it reports whether session was a member.
func (g *group) leave(session uint64, partitions int) bool {
	m := g.memberOf(session)
	if m == nil {
		return false
	}
	g.members.remove(m.id)
	g.rebalance(partitions)
	return true
}

// rebalanceGroups re-spreads partitions after the topic's partition count changed.
func (t *topic) rebalanceGroups() {
	for _, g := range t.groups {
		g.rebalance(len(t.partitions))
	}
}

func (t *topic) resolveGroup(id wire.Identifier) *group {
	if id.IsName() {
		gid, ok := t.groupIndex[id.Name]
		if !ok {
			return nil
		}
		return t.groups[gid]
	}
	return t.groups[id.Numeric]
}

// createGroup is CreateConsumerGroup (602).
func (s *state) createGroup(sess *session, streamID, topicID wire.Identifier, name string) (groupView, *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, t, err := s.metadataTopic(sess, streamID, topicID, grants.getTopic)
	if err != nil {
		return groupView{}, err
	}
	if _, ok := t.groupIndex[name]; ok {
		return groupView{}, reject(codeConsumerGroupNameExists)
	}
	g := &group{id: t.nextGroupID, name: name}
	t.nextGroupID++
	t.groups[g.id] = g
	t.groupIndex[name] = g.id
	s.committed()
	return g.view(len(t.partitions)), nil
}

// groupOp resolves a metadata group operation's target and checks the caller may act on the
// topic (every group operation needs read access to the topic).
func (s *state) groupOp(sess *session, streamID, topicID, groupID wire.Identifier) (*topic, *group, *opError) {
	_, t, err := s.metadataTopic(sess, streamID, topicID, grants.getTopic)
	if err != nil {
		return nil, nil, err
	}
	g := t.resolveGroup(groupID)
	if g == nil {
		return nil, nil, reject(codeConsumerGroupIDNotFound)
	}
	return t, g, nil
}

// deleteGroup is DeleteConsumerGroup (603).
func (s *state) deleteGroup(sess *session, streamID, topicID, groupID wire.Identifier) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, g, err := s.groupOp(sess, streamID, topicID, groupID)
	if err != nil {
		return err
	}
	delete(t.groups, g.id)
	delete(t.groupIndex, g.name)
	for _, p := range t.partitions {
		delete(p.groupOffsets, g.id)
	}
	s.committed()
	return nil
}

// joinGroup is JoinConsumerGroup (604).
func (s *state) joinGroup(sess *session, streamID, topicID, groupID wire.Identifier) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, g, err := s.groupOp(sess, streamID, topicID, groupID)
	if err != nil {
		return err
	}
	g.join(sess.id, len(t.partitions))
	s.committed()
	return nil
}

// leaveGroup is LeaveConsumerGroup (605).
func (s *state) leaveGroup(sess *session, streamID, topicID, groupID wire.Identifier) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, g, err := s.groupOp(sess, streamID, topicID, groupID)
	if err != nil {
		return err
	}
	if !g.leave(sess.id, len(t.partitions)) {
		return reject(codeConsumerGroupMemberNotFound)
	}
	s.committed()
	return nil
}

// getGroup is GetConsumerGroup (600): an unknown stream or topic is an error, an unknown group
// an empty reply (found = false).
func (s *state) getGroup(sess *session, streamID, topicID, groupID wire.Identifier) (v groupView, found bool, err *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, t, err := s.resolveTopic(streamID, topicID)
	if err != nil {
		return groupView{}, false, err
	}
	if err := s.grantsOf(sess).getTopic(st.id, t.id); err != nil {
		return groupView{}, false, err
	}
	g := t.resolveGroup(groupID)
	if g == nil {
		return groupView{}, false, nil
	}
	return g.view(len(t.partitions)), true, nil
}

// getGroups is GetConsumerGroups (601).
func (s *state) getGroups(sess *session, streamID, topicID wire.Identifier) ([]groupView, *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, t, err := s.resolveTopic(streamID, topicID)
	if err != nil {
		return nil, err
	}
	if err := s.grantsOf(sess).getTopic(st.id, t.id); err != nil {
		return nil, err
	}
	ids := make([]uint32, 0, len(t.groups))
	for id := range t.groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]groupView, 0, len(ids))
	for _, id := range ids {
		out = append(out, t.groups[id].view(len(t.partitions)))
	}
	return out, nil
}

// syncGroup is SyncConsumerGroup (606): the caller's generation and partitions; found is false
// (an empty reply) when the group or the membership does not exist.
func (s *state) syncGroup(sess *session, streamID, topicID, groupID wire.Identifier) (a wire.GroupAssignment, found bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, t, err := s.resolveTopic(streamID, topicID)
	if err != nil {
		return a, false
	}
	g := t.resolveGroup(groupID)
	if g == nil {
		return a, false
	}
	m := g.memberOf(sess.id)
	if m == nil {
		return a, false
	}
	return wire.GroupAssignment{Generation: g.generation, Partitions: slices.Clone(m.partitions)}, true
}

// releaseMemberships drops session from every group it joined (logout and disconnect).
func (s *state) releaseMembershipsLocked(session uint64) {
	s.streams.each(func(_ uint32, st *stream) {
		st.topics.each(func(_ uint32, t *topic) {
			for _, g := range t.groups {
				g.leave(session, len(t.partitions))
			}
		})
	})
}

// membershipsLocked lists the (stream, topic, group) ids session is a member of.
func (s *state) membershipsLocked(session uint64) []wire.MeGroup {
	var out []wire.MeGroup
	s.streams.each(func(sid uint32, st *stream) {
		st.topics.each(func(tid uint32, t *topic) {
			for gid, g := range t.groups {
				if g.memberOf(session) != nil {
					out = append(out, wire.MeGroup{StreamID: sid, TopicID: tid, GroupID: gid})
				}
			}
		})
	})
	slices.SortFunc(out, func(a, b wire.MeGroup) int {
		if a.StreamID != b.StreamID {
			return int(a.StreamID) - int(b.StreamID)
		}
		if a.TopicID != b.TopicID {
			return int(a.TopicID) - int(b.TopicID)
		}
		return int(a.GroupID) - int(b.GroupID)
	})
	return out
}
