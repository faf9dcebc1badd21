package groups

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// staticGroup forms a stable group of static members with the given instance ids; member i
// gets assignment "a-<instance>". It returns the member ids and the generation.
func (h *harness) staticGroup(instances []string, opts ...joinOpt) ([]string, int32) {
	h.t.Helper()
	joins := make([]*pendingJoin, len(instances))
	for i, in := range instances {
		// Static members skip MEMBER_ID_REQUIRED and join at once.
		joins[i] = h.startJoin("client-"+in, append(opts, withInstance(in))...)
		joins[i].mustParked()
	}
	h.clock.Advance(2 * h.c.cfg.InitialRebalanceDelay)
	ids := make([]string, len(instances))
	var leader string
	var assignments []string
	for i, j := range joins {
		r := j.ok()
		ids[i], leader = r.memberID, r.leader
		if !strings.HasPrefix(r.memberID, instances[i]+"-") {
			h.t.Fatalf("static member id %q does not start with its instance id", r.memberID)
		}
		assignments = append(assignments, r.memberID, "a-"+instances[i])
	}
	var syncs []*pendingSync
	for _, id := range ids {
		if id != leader {
			syncs = append(syncs, h.startSync(staticSync(id, instances[indexOf(ids, id)], 1)))
		}
	}
	ls := staticSync(leader, instances[indexOf(ids, leader)], 1)
	for i := 0; i < len(assignments); i += 2 {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = assignments[i], []byte(assignments[i+1])
		ls.GroupAssignment = append(ls.GroupAssignment, a)
	}
	syncs = append(syncs, h.startSync(ls))
	for _, s := range syncs {
		s.assignment()
	}
	h.mustState("Stable")
	return ids, 1
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func staticSync(member, instance string, gen int32) *kmsg.SyncGroupRequest {
	r := syncRequest(member, gen)
	r.InstanceID = kmsg.StringPtr(instance)
	return r
}

func TestStaticMemberRejoinsWithoutRebalance(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.staticGroup([]string{"i-a", "i-b"})
	leader, follower := ids[0], ids[1]

	// The follower restarts: same instance id, no member id, same protocols.
	r := h.startJoin("client-b2", withInstance("i-b")).ok()
	if r.memberID == follower || !strings.HasPrefix(r.memberID, "i-b-") {
		t.Fatalf("replacement member id %q", r.memberID)
	}
	if r.generation != gen || r.leader != leader || len(r.members) != 0 || r.skipAssignment {
		t.Fatalf("rejoin result %+v", r)
	}
	h.mustState("Stable")
	h.mustHeartbeat(leader, gen, nil) // no rebalance for the others
	if got := h.startSync(staticSync(r.memberID, "i-b", gen)).assignment(); got != "a-i-b" {
		t.Fatalf("previous assignment not kept: %q", got)
	}

	// The old member id is fenced.
	if err := h.heartbeat(follower, gen, "i-b"); err != kerr.FencedInstanceID {
		t.Fatalf("old id heartbeat: %v", err)
	}
	h.startSync(staticSync(follower, "i-b", gen)).fails(kerr.FencedInstanceID)
	h.startJoin("client-b", withInstance("i-b"), withMember(follower)).fails(kerr.FencedInstanceID)
	if err := h.c.ValidateOffsetCommit(testGroup, follower, kmsg.StringPtr("i-b"), gen); err != kerr.FencedInstanceID {
		t.Fatalf("old id commit: %v", err)
	}

	d := h.describe()
	if len(d.Members) != 2 || d.Members[1].MemberID != r.memberID || *d.Members[1].InstanceID != "i-b" || d.Members[1].ClientID != "client-b2" {
		t.Fatalf("describe %+v", d.Members)
	}
}

func TestStaticLeaderRejoinSkipsAssignment(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.staticGroup([]string{"i-a", "i-b"})
	r := h.startJoin("client-a", withInstance("i-a")).ok()
	if r.leader != r.memberID || !r.skipAssignment || r.generation != gen || len(r.members) != 2 {
		t.Fatalf("leader rejoin %+v", r)
	}
	h.mustState("Stable")
	h.mustHeartbeat(ids[1], gen, nil)
	// A leader without KIP-814 support may still send assignments: a stable group ignores them.
	s := staticSync(r.memberID, "i-a", gen)
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID, a.MemberAssignment = r.memberID, []byte("new")
	s.GroupAssignment = append(s.GroupAssignment, a)
	if got := h.startSync(s).assignment(); got != "a-i-a" {
		t.Fatalf("assignment %q", got)
	}
}

func TestStaticRejoinChangingSelectedProtocolRebalances(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.staticGroup([]string{"i-a"})
	j := h.startJoin("client-a", withInstance("i-a"), withProtocols("sticky", "s", "range", "r"))
	r := j.ok() // the only member: the barrier completes at once
	if r.generation != gen+1 || r.protocol != "sticky" || r.memberID == ids[0] {
		t.Fatalf("rejoin %+v", r)
	}
}

func TestStaticRejoinWithChangedMetadataKeepsAssignment(t *testing.T) {
	// Like Kafka, only a change of the selected protocol forces a rebalance: a restarted
	// cooperative consumer rejoins with different metadata (no owned partitions yet) and must
	// still get its assignment back without one.
	h := newHarness(t)
	_, gen := h.staticGroup([]string{"i-a", "i-b"})
	r := h.startJoin("client-b", withInstance("i-b"), withProtocols("range", "changed")).ok()
	if r.generation != gen {
		t.Fatalf("rejoin %+v", r)
	}
	h.mustState("Stable")
}

func TestStaticRejoinFencesParkedRequests(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.staticGroup([]string{"i-a", "i-b"})
	// A rebalance starts and the old incarnation of i-b is parked in the barrier.
	old := h.startJoin("client-b", withInstance("i-b"), withMember(ids[1]), withProtocols("range", "v2"))
	old.mustParked()
	h.mustState("PreparingRebalance")
	// The new incarnation takes over the instance id and joins the running barrier.
	nw := h.startJoin("client-b", withInstance("i-b"))
	old.fails(kerr.FencedInstanceID)
	nw.mustParked()
	ja := h.startJoin("client-a", withInstance("i-a"), withMember(ids[0]))
	ra, rb := ja.ok(), nw.ok()
	if ra.generation != gen+1 || rb.generation != gen+1 || len(ra.members) != 2 {
		t.Fatalf("results %+v %+v", ra, rb)
	}
	// In CompletingRebalance a takeover restarts the barrier: the leader may be assigning with
	// the old member id. A parked SyncGroup of the old incarnation is fenced.
	sb := h.startSync(staticSync(rb.memberID, "i-b", gen+1))
	sb.mustParked()
	nw2 := h.startJoin("client-b", withInstance("i-b"))
	sb.fails(kerr.FencedInstanceID)
	nw2.mustParked()
	h.mustState("PreparingRebalance")
}

func TestStaticMembersSurviveRebalanceTimeoutUntilSessionExpiry(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.staticGroup([]string{"i-a", "i-b"}, withSession(time.Minute))
	// i-a rejoins with new metadata (a rebalance); i-b is away but within its session.
	ja := h.startJoin("client-a", withInstance("i-a"), withMember(ids[0]), withProtocols("range", "v2"), withSession(time.Minute))
	h.clock.Advance(testRebalance) // the barrier times out; unlike a dynamic member, i-b is kept
	r := ja.ok()
	if r.generation != gen+1 || len(r.members) != 2 {
		t.Fatalf("result %+v", r)
	}
	// i-b does not come back to sync: after the rebalance timeout it is removed.
	h.sync(ids[0], gen+1, ids[0], "x").assignment()
	h.clock.Advance(testRebalance)
	if err := h.heartbeat(ids[1], gen+1, "i-b"); err != kerr.UnknownMemberID {
		t.Fatalf("heartbeat of expired static member: %v", err)
	}
}

func TestLeaveGroupBatch(t *testing.T) {
	h := newHarness(t)
	ids, _ := h.staticGroup([]string{"i-a", "i-b", "i-c"})
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 5
	req.Group = testGroup
	member := func(id string, instance *string) kmsg.LeaveGroupRequestMember {
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID, m.InstanceID = id, instance
		return m
	}
	req.Members = []kmsg.LeaveGroupRequestMember{
		member("", kmsg.StringPtr("i-a")),      // admin removal by instance id
		member("wrong", kmsg.StringPtr("i-b")), // fenced
		member("", kmsg.StringPtr("i-z")),      // unknown instance
		member("nobody", nil),                  // unknown member
		member(ids[2], kmsg.StringPtr("i-c")),  // the member itself
	}
	resp := h.c.LeaveGroup(req)
	want := []int16{0, kerr.FencedInstanceID.Code, kerr.UnknownMemberID.Code, kerr.UnknownMemberID.Code, 0}
	if resp.ErrorCode != 0 || len(resp.Members) != len(want) {
		t.Fatalf("response %+v", resp)
	}
	for i, m := range resp.Members {
		if m.ErrorCode != want[i] || m.MemberID != req.Members[i].MemberID {
			t.Fatalf("member %d: %+v, want code %d", i, m, want[i])
		}
	}
	d := h.describe()
	if d.State != "PreparingRebalance" || len(d.Members) != 1 || d.Members[0].MemberID != ids[1] {
		t.Fatalf("after leave %+v", d)
	}
}

func TestLeaveGroupSingleForm(t *testing.T) {
	h := newHarness(t)
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 2
	req.Group = testGroup
	req.MemberID = "nobody"
	if code := h.c.LeaveGroup(req).ErrorCode; code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown group: %v", kerr.ErrorForCode(code))
	}
	first := h.startJoin("a").fails(kerr.MemberIDRequired)
	req.MemberID = first.memberID // a pending member may leave too
	if code := h.c.LeaveGroup(req).ErrorCode; code != 0 {
		t.Fatalf("pending leave: %v", kerr.ErrorForCode(code))
	}
	if len(h.c.groups) != 0 {
		t.Fatal("group not dropped")
	}
	req.Group = ""
	if code := h.c.LeaveGroup(req).ErrorCode; code != kerr.InvalidGroupID.Code {
		t.Fatalf("empty group id: %v", kerr.ErrorForCode(code))
	}
}

func TestLastMemberLeavingEmptiesGroup(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("a")
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 3
	req.Group = testGroup
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = ids[0]
	req.Members = append(req.Members, m)
	if resp := h.c.LeaveGroup(req); resp.Members[0].ErrorCode != 0 {
		t.Fatalf("leave %+v", resp)
	}
	h.mustState("Dead")
	last := h.gens[len(h.gens)-1]
	if last.Generation != gen+1 || last.Members != 0 || last.Protocol != "" {
		t.Fatalf("generation event %+v", last)
	}
}

func TestStaticMemberWithoutLeaveExpiresBySession(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.staticGroup([]string{"i-a", "i-b"})
	// i-b's process stops without LeaveGroup (static members do not leave on close).
	for range 3 {
		h.clock.Advance(4 * time.Second)
		h.heartbeat(ids[0], gen, "i-a")
	}
	if err := h.heartbeat(ids[0], gen, "i-a"); err != kerr.RebalanceInProgress {
		t.Fatalf("heartbeat after i-b expired: %v", err)
	}
	if d := h.describe(); len(d.Members) != 1 {
		t.Fatalf("members %+v", d.Members)
	}
	// Its instance id is free again: a new incarnation joins as a new member.
	if r := h.startJoin("client-b", withInstance("i-b")); r.ready() {
		t.Fatalf("new incarnation answered before the barrier: %+v", r.res)
	}
}
