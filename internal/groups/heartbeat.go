package groups

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeat handles a Heartbeat request: it keeps the member's session alive and tells it,
// with REBALANCE_IN_PROGRESS, when it must rejoin.
func (c *Coordinator) Heartbeat(req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	if err := c.heartbeat(req); err != nil {
		resp.ErrorCode = err.Code
	}
	return resp
}

func (c *Coordinator) heartbeat(req *kmsg.HeartbeatRequest) *kerr.Error {
	if err := c.checkGroupID(req.Group, false); err != nil {
		return err
	}
	g, _ := c.lockGroup(req.Group, false)
	if g == nil {
		return kerr.UnknownMemberID
	}
	defer c.unlockAndMaybeDrop(g)
	if err := g.validateMember(req.MemberID, req.InstanceID); err != nil {
		return err
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration
	}
	m := g.members[req.MemberID]
	switch g.state {
	case statePreparingRebalance:
		g.scheduleSession(m)
		return kerr.RebalanceInProgress
	case stateCompletingRebalance, stateStable:
		// A member may heartbeat between its JoinGroup and SyncGroup answers.
		g.scheduleSession(m)
		return nil
	default:
		return kerr.UnknownMemberID
	}
}
