package groups

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaveGroup handles a LeaveGroup request: the single-member form (v0-2) and the batch form
// (v3+), where a member is named by member id, or by group.instance.id alone (an admin removing
// a static member). Per-member results echo the request in order. Removing members rebalances
// the group.
func (c *Coordinator) LeaveGroup(req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	leaving := req.Members
	if req.Version < 3 {
		leaving = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	if err := c.checkGroupID(req.Group, false); err != nil {
		resp.ErrorCode = err.Code
		return resp
	}
	results := make([]kmsg.LeaveGroupResponseMember, len(leaving))
	for i, l := range leaving {
		results[i] = kmsg.NewLeaveGroupResponseMember()
		results[i].MemberID = l.MemberID
		results[i].InstanceID = l.InstanceID
	}
	if g, _ := c.lockGroup(req.Group, false); g == nil {
		for i := range results {
			results[i].ErrorCode = kerr.UnknownMemberID.Code
		}
	} else {
		g.leave(leaving, results)
		c.unlockAndMaybeDrop(g)
	}
	if req.Version < 3 {
		resp.ErrorCode = results[0].ErrorCode
	} else {
		resp.Members = results
	}
	return resp
}

func (g *group) leave(leaving []kmsg.LeaveGroupRequestMember, results []kmsg.LeaveGroupResponseMember) {
	removed, removedPending := false, false
	for i, l := range leaving {
		var err *kerr.Error
		switch {
		case l.MemberID == "":
			// Removal by group.instance.id alone.
			id, ok := "", false
			if l.InstanceID != nil {
				id, ok = g.static[*l.InstanceID]
			}
			if !ok {
				err = kerr.UnknownMemberID
				break
			}
			g.removeMember(g.members[id])
			removed = true
		case g.removePending(l.MemberID):
			removedPending = true
		default:
			if err = g.validateMember(l.MemberID, l.InstanceID); err == nil {
				g.removeMember(g.members[l.MemberID])
				removed = true
			}
		}
		if err != nil {
			results[i].ErrorCode = err.Code
			continue
		}
		// Reason is optional (v5+); log its text, not the pointer.
		g.c.cfg.Logger.Debug("consumer group member left", "group", g.name, "member", l.MemberID, "instance", deref(l.InstanceID), "reason", deref(l.Reason))
	}
	switch {
	case removed:
		g.removedMembers()
	case removedPending:
		g.tryCompleteJoin()
	}
}

// removedMembers moves the group on after members were removed.
func (g *group) removedMembers() {
	switch g.state {
	case stateStable, stateCompletingRebalance:
		g.prepareRebalance()
	case statePreparingRebalance:
		g.tryCompleteJoin()
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
