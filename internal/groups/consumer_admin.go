package groups

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The consumer-protocol side of the admin and offset APIs: ConsumerGroupDescribe, and what
// ListGroups, DescribeGroups, DeleteGroups, OffsetCommit, OffsetFetch and OffsetDelete do
// when the id names a consumer group.

// memberTypeConsumer is ConsumerGroupDescribe v1's MemberType of a consumer-protocol member.
const memberTypeConsumer = 1

// ConsumerGroupDescribe handles a ConsumerGroupDescribe request. A classic group, or an id
// naming no group, is GROUP_ID_NOT_FOUND, as in Kafka (admin clients then fall back to
// DescribeGroups). AuthorizedOperations is left at "not provided".
func (c *Coordinator) ConsumerGroupDescribe(req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	for _, name := range req.Groups {
		dg := kmsg.NewConsumerGroupDescribeResponseGroup()
		dg.Group = name
		if err := c.checkGroupID(name, true); err != nil {
			dg.ErrorCode = err.Code
			resp.Groups = append(resp.Groups, dg)
			continue
		}
		g, err := c.lockConsumerGroup(name, false)
		if g == nil {
			if err == nil {
				err = kerr.GroupIDNotFound
			}
			dg.ErrorCode = err.Code
			dg.ErrorMessage = kmsg.StringPtr("group " + name + " is not a consumer group")
			resp.Groups = append(resp.Groups, dg)
			continue
		}
		g.describe(&dg, req.Version)
		g.mu.Unlock()
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

func (g *cgroup) describe(dg *kmsg.ConsumerGroupDescribeResponseGroup, version int16) {
	dg.State = g.stateName()
	dg.Epoch = g.epoch
	dg.AssignmentEpoch = g.assignmentEpoch
	dg.AssignorName = g.assignor
	if dg.AssignorName == "" {
		dg.AssignorName = g.preferredAssignor()
	}
	for _, m := range g.sortedMembers() {
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID = m.id
		dm.InstanceID = m.instanceID
		dm.RackID = m.rackID
		dm.MemberEpoch = m.epoch
		dm.ClientID = m.client.ID
		dm.ClientHost = m.client.Host
		dm.SubscribedTopics = slices.Clone(m.names)
		if dm.SubscribedTopics == nil {
			dm.SubscribedTopics = []string{}
		}
		if m.regex != "" {
			dm.SubscribedTopicRegex = kmsg.StringPtr(m.regex)
		}
		dm.Assignment = g.describedAssignment(m.assigned)
		dm.TargetAssignment = g.describedAssignment(g.target[m.id])
		if version >= 1 {
			dm.MemberType = memberTypeConsumer
		}
		dg.Members = append(dg.Members, dm)
	}
}

func (g *cgroup) describedAssignment(ps partitionSet) kmsg.Assignment {
	a := kmsg.NewAssignment()
	a.TopicPartitions = []kmsg.AssignmentTopicPartition{}
	for _, p := range ps.sorted() {
		n := len(a.TopicPartitions)
		if n == 0 || a.TopicPartitions[n-1].Topic != p.topic {
			t := kmsg.NewAssignmentTopicPartition()
			t.Topic, t.TopicID = p.topic, g.ids[p.topic]
			a.TopicPartitions = append(a.TopicPartitions, t)
			n++
		}
		a.TopicPartitions[n-1].Partitions = append(a.TopicPartitions[n-1].Partitions, p.partition)
	}
	return a
}

// listedConsumerGroup is a consumer group as ListGroups reports it.
type listedConsumerGroup struct{ name, state string }

// consumerGroups lists the consumer groups with their states.
func (c *Coordinator) consumerGroups() []listedConsumerGroup {
	c.mu.Lock()
	gs := make([]*cgroup, 0, len(c.consumer))
	for _, g := range c.consumer {
		gs = append(gs, g)
	}
	c.mu.Unlock()
	out := make([]listedConsumerGroup, 0, len(gs))
	for _, g := range gs {
		g.mu.Lock()
		if !g.dead {
			out = append(out, listedConsumerGroup{g.name, g.stateName()})
		}
		g.mu.Unlock()
	}
	return out
}

// isConsumerGroup reports whether name is a consumer group (DescribeGroups answers it as
// Kafka does: not a classic group).
func (c *Coordinator) isConsumerGroup(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.consumer[name] != nil
}

// dropConsumerGroup deletes the named consumer group for DeleteGroups: NON_EMPTY_GROUP while
// it has members. found reports whether there was one.
func (c *Coordinator) dropConsumerGroup(name string) (found bool, err *kerr.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.consumer[name]
	if g == nil {
		return false, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.members) > 0 {
		return true, kerr.NonEmptyGroup
	}
	g.kill()
	delete(c.consumer, name)
	return true, nil
}

// consumerOffsetDeleteGuard is OffsetDeleteGuard for a consumer group (ok false when name is
// none): with members, the partitions of topics they subscribe to are protected
// (GROUP_SUBSCRIBED_TO_TOPIC), as Kafka does; without, everything may go.
func (c *Coordinator) consumerOffsetDeleteGuard(name string) (subscribed func(string) bool, active, ok bool) {
	g, _ := c.lockConsumerGroup(name, false)
	if g == nil {
		return nil, false, false
	}
	defer g.mu.Unlock()
	if len(g.members) == 0 {
		return func(string) bool { return false }, false, true
	}
	topics := make(map[string]bool)
	for t := range g.topics {
		topics[t] = true
	}
	return func(t string) bool { return topics[t] }, true, true
}

// ValidateOffsetCommitVersion is ValidateOffsetCommit for OffsetCommit at version: a consumer
// group checks the committing member by its member epoch, as Kafka does (an admin commit,
// with no member and epoch -1, only while the group is empty; an unknown member is
// UNKNOWN_MEMBER_ID; an epoch other than the member's is STALE_MEMBER_EPOCH; a member of the
// consumer protocol must use v9+, else UNSUPPORTED_VERSION); a classic group is checked by
// ValidateOffsetCommit.
func (c *Coordinator) ValidateOffsetCommitVersion(group, memberID string, instanceID *string, generation int32, version int16) *kerr.Error {
	if err := c.checkGroupID(group, true); err != nil {
		return err
	}
	c.mu.Lock()
	g := c.consumer[group]
	c.mu.Unlock()
	if g == nil {
		return c.ValidateOffsetCommit(group, memberID, instanceID, generation)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dead {
		return kerr.CoordinatorLoadInProgress // deleted meanwhile: the retry sees what replaced it
	}
	if generation < 0 && memberID == "" && len(g.members) == 0 {
		return nil
	}
	m := g.members[memberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID
	case version < 9:
		return kerr.UnsupportedVersion
	case generation != m.epoch:
		return kerr.StaleMemberEpoch
	}
	return nil
}

// ValidateOffsetFetch checks an OffsetFetch (v9+) made by a member of a consumer group: a
// fetch without member id and epoch (admin tools) is always allowed; otherwise the member
// must exist (UNKNOWN_MEMBER_ID) at that epoch (STALE_MEMBER_EPOCH), as in Kafka. Classic
// groups need no check.
func (c *Coordinator) ValidateOffsetFetch(group string, memberID *string, memberEpoch int32) *kerr.Error {
	if memberID == nil && memberEpoch < 0 {
		return nil
	}
	c.mu.Lock()
	g := c.consumer[group]
	c.mu.Unlock()
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var m *cmember
	if memberID != nil {
		m = g.members[*memberID]
	}
	switch {
	case m == nil:
		return kerr.UnknownMemberID
	case memberEpoch != m.epoch:
		return kerr.StaleMemberEpoch
	}
	return nil
}
