package groups

import (
	"context"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// joinResult is the outcome of a JoinGroup, filled into the response by the caller's
// goroutine so that the response matches the request version.
type joinResult struct {
	code           int16
	memberID       string
	generation     int32
	protocolType   string
	protocol       string
	leader         string
	skipAssignment bool
	members        []kmsg.JoinGroupResponseMember
}

func errJoin(memberID string, err *kerr.Error) joinResult {
	return joinResult{code: err.Code, memberID: memberID, generation: -1}
}

func (r *joinResult) fill(resp *kmsg.JoinGroupResponse) {
	resp.ErrorCode = r.code
	resp.MemberID = r.memberID
	resp.Generation = r.generation
	if r.code == 0 {
		resp.ProtocolType = kmsg.StringPtr(r.protocolType)
		resp.Protocol = kmsg.StringPtr(r.protocol)
	}
	resp.LeaderID = r.leader
	resp.SkipAssignment = r.skipAssignment
	resp.Members = r.members
}

// joinResult is the successful answer to m for the current generation; only the leader gets
// the member list.
func (g *group) joinResult(m *member) joinResult {
	r := joinResult{
		memberID:     m.id,
		generation:   g.generation,
		protocolType: g.protocolType,
		protocol:     g.protocol,
		leader:       g.leader,
	}
	if m.id == g.leader {
		r.members = g.memberList()
	}
	return r
}

// joinRequest is a validated JoinGroup with its strings and blobs copied out of the request.
type joinRequest struct {
	version          int16
	memberID         string
	instanceID       *string
	client           Client
	protocolType     string
	protocols        []protocol
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
}

// JoinGroup handles a JoinGroup request. It blocks until the join barrier completes, or until
// ctx ends (then the answer is COORDINATOR_NOT_AVAILABLE and the member stays in the barrier,
// as in Kafka). ctx should live as long as the client connection, not a short request
// deadline: a barrier can last the whole rebalance timeout.
func (c *Coordinator) JoinGroup(ctx context.Context, client Client, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	res, wait := c.startJoin(client, req)
	if wait != nil {
		select {
		case res = <-wait:
		case <-ctx.Done():
			res = errJoin(req.MemberID, kerr.CoordinatorNotAvailable)
		}
	}
	res.fill(resp)
	return resp
}

// startJoin does the synchronous part of a JoinGroup: it returns either the answer or a
// channel that receives it when the barrier completes.
func (c *Coordinator) startJoin(client Client, req *kmsg.JoinGroupRequest) (joinResult, chan joinResult) {
	r, err := c.parseJoin(client, req)
	if err != nil {
		return errJoin(req.MemberID, err), nil
	}
	g, err := c.lockGroup(req.Group, r.memberID == "")
	if err != nil {
		return errJoin(r.memberID, err), nil
	}
	if g == nil {
		return errJoin(r.memberID, kerr.UnknownMemberID), nil
	}
	defer c.unlockAndMaybeDrop(g)
	return g.join(r)
}

func (c *Coordinator) parseJoin(client Client, req *kmsg.JoinGroupRequest) (*joinRequest, *kerr.Error) {
	if err := c.checkGroupID(req.Group, false); err != nil {
		return nil, err
	}
	r := &joinRequest{
		version:          req.Version,
		memberID:         strings.Clone(req.MemberID),
		client:           Client{ID: strings.Clone(client.ID), Host: strings.Clone(client.Host)},
		protocolType:     strings.Clone(req.ProtocolType),
		sessionTimeout:   time.Duration(req.SessionTimeoutMillis) * time.Millisecond,
		rebalanceTimeout: time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond,
	}
	if r.sessionTimeout < c.cfg.MinSessionTimeout || r.sessionTimeout > c.cfg.MaxSessionTimeout {
		return nil, kerr.InvalidSessionTimeout
	}
	if req.Version == 0 || r.rebalanceTimeout <= 0 {
		r.rebalanceTimeout = r.sessionTimeout // v0 has no rebalance timeout
	}
	if req.InstanceID != nil {
		if *req.InstanceID == "" || len(*req.InstanceID) > c.cfg.MaxIDBytes {
			return nil, kerr.InvalidRequest
		}
		id := strings.Clone(*req.InstanceID)
		r.instanceID = &id
	}
	if r.protocolType == "" || len(req.Protocols) == 0 {
		return nil, kerr.InconsistentGroupProtocol
	}
	if len(req.Protocols) > c.cfg.MaxProtocols {
		return nil, kerr.InvalidRequest
	}
	size := 0
	for _, p := range req.Protocols {
		if containsProtocol(r.protocols, p.Name) {
			continue // Kafka keys protocols by name; a repeated name is ignored
		}
		size += len(p.Metadata)
		if size > c.cfg.MaxMemberMetadataBytes {
			return nil, kerr.InvalidRequest
		}
		r.protocols = append(r.protocols, protocol{name: strings.Clone(p.Name), metadata: append([]byte(nil), p.Metadata...)})
	}
	return r, nil
}

func containsProtocol(ps []protocol, name string) bool {
	for _, p := range ps {
		if p.name == name {
			return true
		}
	}
	return false
}

func (g *group) join(r *joinRequest) (joinResult, chan joinResult) {
	if !g.supportsProtocols(r.protocolType, r.protocols) {
		return errJoin(r.memberID, kerr.InconsistentGroupProtocol), nil
	}
	if r.memberID == "" {
		return g.joinNewMember(r)
	}
	return g.joinKnownMember(r)
}

// fits reports whether the group may hold delta more bytes of member metadata.
func (g *group) fits(delta int) bool {
	return g.blobBytes+delta <= g.c.cfg.MaxGroupBytes
}

func (g *group) joinNewMember(r *joinRequest) (joinResult, chan joinResult) {
	prefix := r.client.ID
	if r.instanceID != nil {
		prefix = *r.instanceID
		if old, ok := g.static[*r.instanceID]; ok {
			return g.replaceStaticMember(g.members[old], newMemberID(prefix), r)
		}
	}
	if len(g.members)+len(g.pending) >= g.c.cfg.MaxGroupSize || !g.fits(metadataBytes(r.protocols)) {
		return errJoin("", kerr.GroupMaxSizeReached), nil
	}
	id := newMemberID(prefix)
	if r.instanceID == nil && r.version >= 4 {
		// KIP-394: hand out the id and wait for the member to come back with it, so that a
		// client that keeps restarting its join does not pile up members.
		g.addPending(id, r.sessionTimeout)
		return errJoin(id, kerr.MemberIDRequired), nil
	}
	return joinResult{}, g.addMemberAndRebalance(id, r)
}

func (g *group) joinKnownMember(r *joinRequest) (joinResult, chan joinResult) {
	if _, ok := g.pending[r.memberID]; ok {
		if r.instanceID != nil {
			// Static members never get pending ids; make the client start over.
			return errJoin(r.memberID, kerr.UnknownMemberID), nil
		}
		if !g.fits(metadataBytes(r.protocols)) {
			return errJoin(r.memberID, kerr.GroupMaxSizeReached), nil
		}
		g.removePending(r.memberID)
		return joinResult{}, g.addMemberAndRebalance(r.memberID, r)
	}
	if err := g.validateMember(r.memberID, r.instanceID); err != nil {
		return errJoin(r.memberID, err), nil
	}
	m := g.members[r.memberID]
	if !g.fits(metadataBytes(r.protocols) - metadataBytes(m.protocols)) {
		return errJoin(r.memberID, kerr.GroupMaxSizeReached), nil
	}
	switch g.state {
	case stateCompletingRebalance:
		if m.sameProtocols(r.protocols) {
			return g.joinResult(m), nil // a retried join: answer it again
		}
	case stateStable:
		if m.id != g.leader && m.sameProtocols(r.protocols) {
			return g.joinResult(m), nil // nothing changed for a follower
		}
	}
	// A changed member, or the leader (which rejoins to reassign), starts a rebalance; in
	// PreparingRebalance the member simply joins the barrier.
	g.setProtocols(m, r.protocols)
	m.sessionTimeout, m.rebalanceTimeout = r.sessionTimeout, r.rebalanceTimeout
	wait := g.parkJoin(m)
	g.rebalanceOrCompleteJoin()
	return joinResult{}, wait
}

func (g *group) addMemberAndRebalance(id string, r *joinRequest) chan joinResult {
	m := &member{
		id:               id,
		instanceID:       r.instanceID,
		client:           r.client,
		sessionTimeout:   r.sessionTimeout,
		rebalanceTimeout: r.rebalanceTimeout,
	}
	wait := g.addMember(m, r.protocolType, r.protocols)
	g.rebalanceOrCompleteJoin()
	return wait
}

// rebalanceOrCompleteJoin is Kafka's maybePrepareRebalance: start a barrier, or check whether
// the running one can complete.
func (g *group) rebalanceOrCompleteJoin() {
	if g.state == statePreparingRebalance {
		g.tryCompleteJoin()
		return
	}
	g.prepareRebalance()
}

// replaceStaticMember gives a returning static member (same group.instance.id, no member id)
// a new member id in place of old (KIP-345). Whatever old still waits for is answered with
// FENCED_INSTANCE_ID, and so is every later request that uses the old id. In a stable group
// whose selected protocol stays the same the member gets its previous assignment back without
// a rebalance; otherwise a rebalance starts.
func (g *group) replaceStaticMember(m *member, id string, r *joinRequest) (joinResult, chan joinResult) {
	if !g.fits(metadataBytes(r.protocols) - metadataBytes(m.protocols)) {
		return errJoin("", kerr.GroupMaxSizeReached), nil
	}
	if m.join != nil {
		m.join <- errJoin(m.id, kerr.FencedInstanceID)
		m.join = nil
	}
	if m.sync != nil {
		m.sync <- syncResult{code: kerr.FencedInstanceID.Code}
		m.sync = nil
	}
	delete(g.members, m.id)
	if _, ok := g.pendingSync[m.id]; ok {
		delete(g.pendingSync, m.id)
		g.pendingSync[id] = struct{}{}
	}
	if g.leader == m.id {
		g.leader = id
	}
	g.c.cfg.Logger.Debug("static member replaced", "group", g.name, "instance", *r.instanceID, "old", m.id, "new", id)
	m.id = id
	g.members[id] = m
	g.static[*r.instanceID] = id
	m.client = r.client
	m.sessionTimeout, m.rebalanceTimeout = r.sessionTimeout, r.rebalanceTimeout
	g.setProtocols(m, r.protocols)
	g.scheduleSession(m)

	switch g.state {
	case stateStable:
		if g.selectProtocol() == g.protocol {
			res := g.joinResult(m)
			// KIP-814: a returning static leader learns the members but must not reassign.
			res.skipAssignment = m.id == g.leader
			return res, nil
		}
		wait := g.parkJoin(m)
		g.prepareRebalance()
		return joinResult{}, wait
	case stateCompletingRebalance:
		// The leader may be assigning with the old member id: start over.
		wait := g.parkJoin(m)
		g.prepareRebalance()
		return joinResult{}, wait
	default: // PreparingRebalance: join the running barrier.
		wait := g.parkJoin(m)
		g.tryCompleteJoin()
		return joinResult{}, wait
	}
}
