package groups

import (
	"bytes"
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type syncResult struct {
	code         int16
	protocolType string
	protocol     string
	assignment   []byte
}

func (r *syncResult) fill(resp *kmsg.SyncGroupResponse) {
	resp.ErrorCode = r.code
	if r.code == 0 {
		resp.ProtocolType = kmsg.StringPtr(r.protocolType)
		resp.Protocol = kmsg.StringPtr(r.protocol)
	}
	resp.MemberAssignment = r.assignment
}

func (g *group) syncResult(m *member) syncResult {
	return syncResult{protocolType: g.protocolType, protocol: g.protocol, assignment: m.assignment}
}

// SyncGroup handles a SyncGroup request. In CompletingRebalance it blocks until the leader's
// assignments arrive (the leader's own SyncGroup delivers them), the round fails, or ctx ends
// (then the answer is COORDINATOR_NOT_AVAILABLE). Assignments are relayed verbatim; members the
// leader left out get an empty assignment, as in Kafka.
func (c *Coordinator) SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	res, wait := c.startSync(req)
	if wait != nil {
		select {
		case res = <-wait:
		case <-ctx.Done():
			res = syncResult{code: kerr.CoordinatorNotAvailable.Code}
		}
	}
	res.fill(resp)
	return resp
}

func (c *Coordinator) startSync(req *kmsg.SyncGroupRequest) (syncResult, chan syncResult) {
	if err := c.checkGroupID(req.Group, false); err != nil {
		return syncResult{code: err.Code}, nil
	}
	g, _ := c.lockGroup(req.Group, false)
	if g == nil {
		return syncResult{code: kerr.UnknownMemberID.Code}, nil
	}
	defer c.unlockAndMaybeDrop(g)
	return g.sync(req)
}

func (g *group) sync(req *kmsg.SyncGroupRequest) (syncResult, chan syncResult) {
	if err := g.validateMember(req.MemberID, req.InstanceID); err != nil {
		return syncResult{code: err.Code}, nil
	}
	if req.Generation != g.generation {
		return syncResult{code: kerr.IllegalGeneration.Code}, nil
	}
	if (req.ProtocolType != nil && *req.ProtocolType != g.protocolType) || (req.Protocol != nil && *req.Protocol != g.protocol) {
		return syncResult{code: kerr.InconsistentGroupProtocol.Code}, nil
	}
	m := g.members[req.MemberID]
	switch g.state {
	case statePreparingRebalance:
		return syncResult{code: kerr.RebalanceInProgress.Code}, nil
	case stateCompletingRebalance:
		if m.sync != nil {
			m.sync <- syncResult{code: kerr.RebalanceInProgress.Code} // superseded by this request
		}
		m.sync = make(chan syncResult, 1)
		wait := m.sync
		g.syncedBy(m.id)
		if m.id == g.leader {
			g.completeSync(req.GroupAssignment)
		}
		return syncResult{}, wait
	case stateStable:
		g.syncedBy(m.id)
		g.scheduleSession(m)
		return g.syncResult(m), nil
	default:
		return syncResult{code: kerr.UnknownMemberID.Code}, nil
	}
}

// completeSync stores the leader's assignments, makes the group Stable and answers every
// parked SyncGroup. Assignments beyond the size limits fail the round with MESSAGE_TOO_LARGE
// and start a new rebalance (Kafka fails it when the group record is too large to store).
func (g *group) completeSync(assignments []kmsg.SyncGroupRequestGroupAssignment) {
	held, incoming := 0, 0
	for _, m := range g.members {
		held += len(m.assignment)
	}
	for _, a := range assignments {
		if _, ok := g.members[a.MemberID]; !ok {
			continue
		}
		if len(a.MemberAssignment) > g.c.cfg.MaxAssignmentBytes {
			incoming = g.c.cfg.MaxGroupBytes + 1
			break
		}
		incoming += len(a.MemberAssignment)
	}
	if !g.fits(incoming - held) {
		g.c.cfg.Logger.Warn("consumer group assignment too large", "group", g.name, "bytes", incoming,
			"max_member_bytes", g.c.cfg.MaxAssignmentBytes, "max_group_bytes", g.c.cfg.MaxGroupBytes)
		g.failSyncs(kerr.MessageTooLarge)
		g.prepareRebalance()
		return
	}
	for _, m := range g.members {
		g.setAssignment(m, nil)
	}
	for _, a := range assignments {
		if m := g.members[a.MemberID]; m != nil {
			g.setAssignment(m, bytes.Clone(a.MemberAssignment))
		}
	}
	g.state = stateStable
	for _, m := range g.members {
		if m.sync != nil {
			m.sync <- g.syncResult(m)
			m.sync = nil
			g.scheduleSession(m)
		}
	}
}
