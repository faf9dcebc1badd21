package groups

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestSyncErrors(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("a", "b")
	a := ids[0]
	h.sync("nobody", gen).fails(kerr.UnknownMemberID)
	h.sync(a, gen+1).fails(kerr.IllegalGeneration)
	req := syncRequest(a, gen)
	req.Protocol = kmsg.StringPtr("roundrobin")
	h.startSync(req).fails(kerr.InconsistentGroupProtocol)
	req = syncRequest(a, gen)
	req.ProtocolType = kmsg.StringPtr("connect")
	h.startSync(req).fails(kerr.InconsistentGroupProtocol)
	req = syncRequest(a, gen)
	req.Group = "unknown"
	h.startSync(req).fails(kerr.UnknownMemberID)
	req.Group = ""
	h.startSync(req).fails(kerr.InvalidGroupID)

	// During a join barrier a sync is told to rejoin.
	h.startJoin("c").fails(kerr.MemberIDRequired)
	h.startJoin("a", withMember(a)).mustParked()
	h.sync(ids[1], gen).fails(kerr.RebalanceInProgress)
}

func TestSyncAnswerCarriesProtocol(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("a")
	resp := h.c.SyncGroup(t.Context(), syncRequest(ids[0], gen))
	if resp.ErrorCode != 0 || resp.ProtocolType == nil || *resp.ProtocolType != "consumer" ||
		resp.Protocol == nil || *resp.Protocol != "range" || string(resp.MemberAssignment) != "a-a" {
		t.Fatalf("sync response %+v", resp)
	}
}

func TestLeaderLeavesMidSync(t *testing.T) {
	h := newHarness(t)
	ids, leader, _ := h.joinedGroup("a", "b")
	a, b := ids[0], ids[1]
	if leader != a {
		t.Fatalf("leader %s", leader)
	}
	sb := h.sync(b, 1)
	sb.mustParked()
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version = 0
	leave.Group = testGroup
	leave.MemberID = a
	if code := h.c.LeaveGroup(leave).ErrorCode; code != 0 {
		t.Fatalf("leave: %v", kerr.ErrorForCode(code))
	}
	sb.fails(kerr.RebalanceInProgress)
	h.mustState("PreparingRebalance")
	r := h.startJoin("b", withMember(b)).ok()
	if r.generation != 2 || r.leader != b || len(r.members) != 1 {
		t.Fatalf("rejoin %+v", r)
	}
}

func TestFollowersThatNeverSyncAreRemoved(t *testing.T) {
	h := newHarness(t)
	ids, _, _ := h.joinedGroup("a", "b")
	a, b := ids[0], ids[1]
	if got := h.sync(a, 1, a, "x", b, "y").assignment(); got != "x" {
		t.Fatalf("assignment %q", got)
	}
	h.mustState("Stable")
	// b never syncs; a heartbeats. After the rebalance timeout b is dropped.
	for range 6 {
		h.clock.Advance(testRebalance / 6)
		h.heartbeat(a, 1)
	}
	h.mustHeartbeat(a, 1, kerr.RebalanceInProgress)
	h.mustHeartbeat(b, 1, kerr.UnknownMemberID)
	r := h.startJoin("a", withMember(a)).ok()
	if r.generation != 2 || len(r.members) != 1 {
		t.Fatalf("rejoin %+v", r)
	}
}

func TestLeaderThatNeverSyncsFailsParkedFollowers(t *testing.T) {
	h := newHarness(t)
	ids, _, _ := h.joinedGroup("a", "b")
	a, b := ids[0], ids[1]
	sb := h.sync(b, 1)
	// Both stay alive (the Java heartbeat thread runs during SyncGroup) but the leader never
	// syncs: after the rebalance timeout it is removed and b must rejoin.
	for range 6 {
		h.clock.Advance(testRebalance / 6)
		if err := h.heartbeat(a, 1); err != nil && err != kerr.UnknownMemberID {
			t.Fatalf("heartbeat of a: %v", err)
		}
		if err := h.heartbeat(b, 1); err != nil && err != kerr.RebalanceInProgress {
			t.Fatalf("heartbeat of b: %v", err)
		}
	}
	sb.fails(kerr.RebalanceInProgress)
	h.mustHeartbeat(a, 1, kerr.UnknownMemberID)
	if r := h.startJoin("b", withMember(b)).ok(); r.generation != 2 || r.leader != b {
		t.Fatalf("rejoin %+v", r)
	}
}

func TestOversizedAssignmentFailsTheRound(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxAssignmentBytes = 4 })
	ids, _, _ := h.joinedGroup("a", "b")
	a, b := ids[0], ids[1]
	sb := h.sync(b, 1)
	h.sync(a, 1, a, "ok", b, strings.Repeat("x", 5)).fails(kerr.MessageTooLarge)
	sb.fails(kerr.MessageTooLarge)
	h.mustState("PreparingRebalance")
}

func TestSessionExpiry(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("a", "b")
	a, b := ids[0], ids[1]
	// a heartbeats every 4s; b falls silent.
	for range 2 {
		h.clock.Advance(4 * time.Second)
		h.mustHeartbeat(a, gen, nil)
	}
	h.clock.Advance(4 * time.Second) // 12s after b's last sign of life
	h.mustHeartbeat(a, gen, kerr.RebalanceInProgress)
	h.mustHeartbeat(b, gen, kerr.UnknownMemberID) // a late heartbeat finds b gone
	r := h.startJoin("a", withMember(a)).ok()
	if r.generation != gen+1 || len(r.members) != 1 {
		t.Fatalf("rejoin %+v", r)
	}
	h.sync(a, gen+1, a, "all").assignment()
	// Once a falls silent too the group empties, bumps its generation and is dropped.
	h.clock.Advance(testSession)
	h.mustState("Dead")
	if len(h.c.groups) != 0 {
		t.Fatal("empty group still in memory")
	}
	last := h.gens[len(h.gens)-1]
	if last.Members != 0 || last.Generation != gen+2 {
		t.Fatalf("last generation event %+v", last)
	}
}

func TestHeartbeatErrors(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("a")
	a := ids[0]
	h.mustHeartbeat(a, gen-1, kerr.IllegalGeneration)
	h.mustHeartbeat("nobody", gen, kerr.UnknownMemberID)
	r := kmsg.NewPtrHeartbeatRequest()
	r.Group = "other"
	r.MemberID = a
	if code := h.c.Heartbeat(r).ErrorCode; code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown group: %v", kerr.ErrorForCode(code))
	}
	r.Group = ""
	if code := h.c.Heartbeat(r).ErrorCode; code != kerr.InvalidGroupID.Code {
		t.Fatalf("empty group id: %v", kerr.ErrorForCode(code))
	}
	// Heartbeats between the JoinGroup and SyncGroup answers keep the member alive.
	jb, _ := h.joinNew("b")
	ja := h.startJoin("a", withMember(a))
	ja.ok()
	jb.ok()
	h.mustState("CompletingRebalance")
	h.mustHeartbeat(a, gen+1, nil)
}

func TestNewMemberParkedInBarrierIsDroppedAfterJoinTimeout(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.NewMemberJoinTimeout = time.Minute })
	ids, gen := h.stableGroup("a")
	jb, _ := h.joinNew("b", withRebalance(5*time.Minute))
	// a never rejoins but keeps heartbeating, so the barrier runs its full rebalance timeout
	// (5 minutes, b's); b is new and is dropped after the new-member join timeout.
	for range 7 {
		h.clock.Advance(9 * time.Second)
		h.heartbeat(ids[0], gen)
	}
	jb.fails(kerr.UnknownMemberID)
}
