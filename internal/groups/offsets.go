package groups

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ValidateOffsetCommit reports whether an OffsetCommit for group from memberID (with its
// group.instance.id and generation) may be stored, with Kafka's rules: a commit without
// generation and member (generation < 0, admin tools and assign() consumers) is accepted only
// while the group has no members; otherwise the member must belong to the current generation,
// and during CompletingRebalance the answer is REBALANCE_IN_PROGRESS. An accepted commit from a
// member counts as a heartbeat. nil means the commit may be stored.
func (c *Coordinator) ValidateOffsetCommit(group, memberID string, instanceID *string, generation int32) *kerr.Error {
	if err := c.checkGroupID(group, true); err != nil {
		return err
	}
	g, _ := c.lockGroup(group, false)
	if g == nil {
		switch {
		case generation >= 0:
			return kerr.IllegalGeneration // a generation this coordinator does not know
		case memberID != "" || instanceID != nil:
			return kerr.UnknownMemberID
		}
		return nil
	}
	defer c.unlockAndMaybeDrop(g)
	var m *member
	if generation >= 0 || memberID != "" || instanceID != nil {
		if err := g.validateMember(memberID, instanceID); err != nil {
			return err
		}
		if generation != g.generation {
			return kerr.IllegalGeneration
		}
		m = g.members[memberID]
	} else if g.state != stateEmpty {
		return kerr.UnknownMemberID // only members may commit for a group that has members
	}
	if g.state == stateCompletingRebalance {
		return kerr.RebalanceInProgress
	}
	if m != nil {
		g.scheduleSession(m)
	}
	return nil
}

// OffsetDeleteGuard tells an OffsetDelete handler what it may delete, as Kafka decides it.
// active is false when the group has no members: every requested offset may go (and the
// answer is GROUP_ID_NOT_FOUND if nothing is stored for the group either). For a group with
// members, err is NON_EMPTY_GROUP unless its protocol type is "consumer"; then subscribed
// reports the topics its members subscribe to, whose partitions must be answered with
// GROUP_SUBSCRIBED_TO_TOPIC. When a subscription cannot be decoded every topic counts as
// subscribed.
func (c *Coordinator) OffsetDeleteGuard(group string) (subscribed func(topic string) bool, active bool, err *kerr.Error) {
	none := func(string) bool { return false }
	if err := c.checkGroupID(group, true); err != nil {
		return none, false, err
	}
	if subscribed, active, ok := c.consumerOffsetDeleteGuard(group); ok {
		return subscribed, active, nil
	}
	g, _ := c.lockGroup(group, false)
	if g == nil {
		return none, false, nil
	}
	defer g.mu.Unlock()
	if len(g.members) == 0 {
		return none, false, nil
	}
	if g.protocolType != "consumer" {
		return none, true, kerr.NonEmptyGroup
	}
	topics, ok := g.subscribedTopics()
	if !ok {
		return func(string) bool { return true }, true, nil
	}
	return func(t string) bool { _, ok := topics[t]; return ok }, true, nil
}

// subscribedTopics decodes the consumer-protocol subscriptions of the members for the
// selected protocol.
func (g *group) subscribedTopics() (map[string]struct{}, bool) {
	if g.protocol == "" {
		return nil, false
	}
	topics := make(map[string]struct{})
	for _, m := range g.members {
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(m.metadataFor(g.protocol)); err != nil {
			return nil, false
		}
		for _, t := range meta.Topics {
			topics[t] = struct{}{}
		}
	}
	return topics, true
}
