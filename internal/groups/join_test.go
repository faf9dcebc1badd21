package groups

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestJoinSyncSingleMember(t *testing.T) {
	h := newHarness(t)
	join, id := h.joinNew("client-a", withProtocols("range", "sub-a"))
	if !strings.HasPrefix(id, "client-a-") {
		t.Fatalf("member id %q does not start with the client id", id)
	}
	join.mustParked()
	h.mustState("PreparingRebalance")

	// A group that starts empty waits for the initial rebalance delay.
	h.clock.Advance(3*time.Second - time.Millisecond)
	join.mustParked()
	h.clock.Advance(time.Millisecond)
	r := join.ok()
	if r.generation != 1 || r.leader != id || r.memberID != id || r.protocol != "range" || r.protocolType != "consumer" {
		t.Fatalf("join result %+v", r)
	}
	if len(r.members) != 1 || string(r.members[0].ProtocolMetadata) != "sub-a" {
		t.Fatalf("leader members %+v", r.members)
	}
	h.mustState("CompletingRebalance")

	if got := h.sync(id, 1, id, "assignment-a").assignment(); got != "assignment-a" {
		t.Fatalf("assignment %q", got)
	}
	d := h.describe()
	if d.State != "Stable" || d.Protocol != "range" || d.ProtocolType != "consumer" || len(d.Members) != 1 {
		t.Fatalf("describe %+v", d)
	}
	dm := d.Members[0]
	if dm.MemberID != id || dm.ClientID != "client-a" || dm.ClientHost != "/127.0.0.1" ||
		string(dm.ProtocolMetadata) != "sub-a" || string(dm.MemberAssignment) != "assignment-a" {
		t.Fatalf("described member %+v", dm)
	}
	h.mustHeartbeat(id, 1, nil)
	if len(h.gens) != 1 || h.gens[0] != (GenerationEvent{Group: testGroup, Generation: 1, ProtocolType: "consumer", Protocol: "range", Leader: id, Members: 1}) {
		t.Fatalf("generation events %+v", h.gens)
	}
}

func TestJoinThreeMembersVotesAndRelaysVerbatim(t *testing.T) {
	h := newHarness(t)
	// Every member supports "range" and "sticky"; two prefer sticky. "roundrobin" is not
	// supported by all members, so it cannot win even though one member prefers it.
	ja, a := h.joinNew("a", withProtocols("roundrobin", "a-rr", "range", "a-range", "sticky", "a-sticky"))
	jb, b := h.joinNew("b", withProtocols("sticky", "b-sticky", "range", "b-range"))
	jc, c := h.joinNew("c", withProtocols("sticky", "c-sticky", "range", "c-range", "roundrobin", "c-rr"))
	h.clock.Advance(3 * time.Second) // b and c arrived in the first window: it extends once
	ja.mustParked()
	h.clock.Advance(3 * time.Second)
	ra, rb, rc := ja.ok(), jb.ok(), jc.ok()
	for _, r := range []joinResult{ra, rb, rc} {
		if r.protocol != "sticky" || r.generation != 1 || r.leader != a {
			t.Fatalf("join result %+v", r)
		}
	}
	if len(rb.members) != 0 || len(rc.members) != 0 {
		t.Fatal("followers received the member list")
	}
	got := map[string]string{}
	for _, m := range ra.members {
		got[m.MemberID] = string(m.ProtocolMetadata)
	}
	want := map[string]string{a: "a-sticky", b: "b-sticky", c: "c-sticky"}
	if len(got) != 3 || got[a] != want[a] || got[b] != want[b] || got[c] != want[c] {
		t.Fatalf("leader member metadata %v, want %v", got, want)
	}

	sb := h.sync(b, 1)
	sc := h.sync(c, 1)
	sb.mustParked()
	sc.mustParked()
	// The leader leaves c out: c gets an empty assignment, as in Kafka.
	sa := h.sync(a, 1, a, "\x00\x01A", b, "\x00\x01B")
	if sa.assignment() != "\x00\x01A" || sb.assignment() != "\x00\x01B" || sc.assignment() != "" {
		t.Fatalf("assignments %q %q %q", sa.res.assignment, sb.res.assignment, sc.res.assignment)
	}
	// Later syncs of the same generation get the stored assignment.
	if got := h.sync(b, 1).assignment(); got != "\x00\x01B" {
		t.Fatalf("re-sync assignment %q", got)
	}
}

func TestProtocolTieBreaksByLeaderPreference(t *testing.T) {
	h := newHarness(t, noDelay)
	// Single member: its top preference wins.
	j, _ := h.joinNew("a", withProtocols("x", "", "y", ""))
	if r := j.ok(); r.protocol != "x" {
		t.Fatalf("protocol %q", r.protocol)
	}
}

func TestInitialDelayExtendsWhileMembersArrive(t *testing.T) {
	h := newHarness(t)
	ja, _ := h.joinNew("a", withRebalance(5*time.Second))
	h.clock.Advance(2 * time.Second)
	jb, _ := h.joinNew("b", withRebalance(5*time.Second))
	h.clock.Advance(time.Second) // first delay ends at 3s; b arrived, so it extends by min(3s, 2s left)
	ja.mustParked()
	jb.mustParked()
	h.clock.Advance(2 * time.Second) // 5s: the rebalance timeout bounds the extension
	if ra, rb := ja.ok(), jb.ok(); ra.generation != 1 || rb.generation != 1 {
		t.Fatalf("generations %d %d", ra.generation, rb.generation)
	}
}

func TestRebalanceWhenMemberJoinsStableGroup(t *testing.T) {
	h := newHarness(t, noDelay)
	ids, gen := h.stableGroup("a")
	a := ids[0]
	jb, b := h.joinNew("b")
	jb.mustParked()
	h.mustState("PreparingRebalance")
	h.mustHeartbeat(a, gen, kerr.RebalanceInProgress)
	ja := h.startJoin("a", withMember(a))
	ra, rb := ja.ok(), jb.ok()
	if ra.generation != gen+1 || rb.generation != gen+1 || ra.leader != a || rb.leader != a {
		t.Fatalf("results %+v %+v", ra, rb)
	}
	if !slices.Equal(memberIDs(ra.members), sortedStrings(a, b)) {
		t.Fatalf("leader members %v", memberIDs(ra.members))
	}
	// The old generation is over.
	h.mustHeartbeat(a, gen, kerr.IllegalGeneration)
	h.sync(a, gen).fails(kerr.IllegalGeneration)
}

func sortedStrings(s ...string) []string {
	slices.Sort(s)
	return s
}

func TestRebalanceTimeoutRemovesMembersThatDidNotRejoin(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("a", "b")
	a, b := ids[0], ids[1]
	jc, c := h.joinNew("c")
	ja := h.startJoin("a", withMember(a))
	ja.mustParked()
	// b keeps heartbeating (so its session does not expire) but never rejoins.
	for range 3 {
		h.clock.Advance(testRebalance / 3)
		if err := h.heartbeat(b, gen); err != kerr.RebalanceInProgress && err != kerr.UnknownMemberID {
			t.Fatalf("heartbeat of b: %v", err)
		}
	}
	ra, rc := ja.ok(), jc.ok()
	if ra.generation != gen+1 || rc.generation != gen+1 {
		t.Fatalf("generations %d %d", ra.generation, rc.generation)
	}
	if !slices.Equal(memberIDs(ra.members), sortedStrings(a, c)) {
		t.Fatalf("members after timeout %v", memberIDs(ra.members))
	}
	h.mustHeartbeat(b, gen+1, kerr.UnknownMemberID)
}

func TestMemberIDRequiredFlow(t *testing.T) {
	h := newHarness(t, noDelay)
	// v4+: the first join only hands out an id.
	r := h.startJoin("a").fails(kerr.MemberIDRequired)
	if r.generation != -1 || r.memberID == "" {
		t.Fatalf("MEMBER_ID_REQUIRED result %+v", r)
	}
	h.mustState("Empty")
	// A join with an id the group never handed out is rejected.
	h.startJoin("a", withMember("a-bogus")).fails(kerr.UnknownMemberID)
	// The handed-out id is accepted.
	if got := h.startJoin("a", withMember(r.memberID)).ok(); got.memberID != r.memberID || got.generation != 1 {
		t.Fatalf("join with handed-out id %+v", got)
	}
}

func TestJoinV3WithoutMemberIDJoinsDirectly(t *testing.T) {
	h := newHarness(t, noDelay)
	r := h.startJoin("a", withVersion(3)).ok()
	if r.memberID == "" || r.generation != 1 || r.leader != r.memberID {
		t.Fatalf("v3 join %+v", r)
	}
}

func TestJoinV0UsesSessionTimeoutAsRebalanceTimeout(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("a", "b")
	h.startJoin("c", withVersion(0), withRebalance(time.Hour)).mustParked()
	ja := h.startJoin("a", withMember(ids[0]))
	// The barrier times out after the longest rebalance timeout among members: a and b use
	// 30s; c (v0) uses its 10s session timeout, not the 1h in the request.
	h.clock.Advance(testRebalance)
	if r := ja.ok(); r.generation != gen+1 {
		t.Fatalf("generation %d", r.generation)
	}
}

func TestPendingMemberHoldsBarrierUntilItRejoinsOrExpires(t *testing.T) {
	h := newHarness(t, noDelay)
	ids, gen := h.stableGroup("a")
	a := ids[0]
	pending := h.startJoin("b").fails(kerr.MemberIDRequired)
	h.mustState("Stable")                 // handing out an id does not rebalance
	ja := h.startJoin("a", withMember(a)) // the leader rejoins: rebalance
	// a is the only member and has rejoined, but b holds an outstanding member id.
	ja.mustParked()
	h.clock.Advance(testSession)
	r := ja.ok() // b's pending id expired
	if r.generation != gen+1 || len(r.members) != 1 {
		t.Fatalf("result %+v", r)
	}
	h.startJoin("b", withMember(pending.memberID)).fails(kerr.UnknownMemberID)
}

func TestPendingMemberRejoinCompletesBarrier(t *testing.T) {
	h := newHarness(t, noDelay)
	ids, gen := h.stableGroup("a")
	first := h.startJoin("b").fails(kerr.MemberIDRequired)
	ja := h.startJoin("a", withMember(ids[0]))
	ja.mustParked()
	jb := h.startJoin("b", withMember(first.memberID))
	if ra, rb := ja.ok(), jb.ok(); ra.generation != gen+1 || rb.generation != gen+1 || len(ra.members) != 2 {
		t.Fatalf("results %+v %+v", ra, rb)
	}
}

func TestFollowerRejoinWithSameMetadataInStableGroupDoesNotRebalance(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("a", "b")
	r := h.startJoin("b", withMember(ids[1])).ok()
	if r.generation != gen || r.leader != ids[0] || len(r.members) != 0 {
		t.Fatalf("result %+v", r)
	}
	h.mustState("Stable")
}

func TestRetriedJoinInCompletingRebalanceIsAnsweredAgain(t *testing.T) {
	h := newHarness(t, noDelay)
	ja, a := h.joinNew("a")
	ja.ok()
	h.mustState("CompletingRebalance")
	r := h.startJoin("a", withMember(a)).ok()
	if r.generation != 1 || r.leader != a || len(r.members) != 1 {
		t.Fatalf("retried join %+v", r)
	}
	h.mustState("CompletingRebalance")
}

func TestJoinAgainWhileParkedSupersedesTheFirstJoin(t *testing.T) {
	h := newHarness(t)
	j1, a := h.joinNew("a")
	j2 := h.startJoin("a", withMember(a))
	j1.fails(kerr.RebalanceInProgress)
	h.clock.Advance(3 * time.Second)
	if r := j2.ok(); r.generation != 1 {
		t.Fatalf("result %+v", r)
	}
}

func TestInconsistentProtocols(t *testing.T) {
	h := newHarness(t, noDelay)
	h.stableGroup("a")
	h.startJoin("b", withType("connect")).fails(kerr.InconsistentGroupProtocol)
	h.startJoin("b", withProtocols("roundrobin", "")).fails(kerr.InconsistentGroupProtocol)
	h.startJoin("b", withType("")).fails(kerr.InconsistentGroupProtocol)
	h.startJoin("b", withProtocols()).fails(kerr.InconsistentGroupProtocol)
}

func TestJoinValidation(t *testing.T) {
	long := strings.Repeat("x", 256)
	tests := []struct {
		name string
		opts []joinOpt
		want *kerr.Error
	}{
		{"empty group id", []joinOpt{withGroup("")}, kerr.InvalidGroupID},
		{"group id too long", []joinOpt{withGroup(long)}, kerr.InvalidGroupID},
		{"session too short", []joinOpt{withSession(time.Second)}, kerr.InvalidSessionTimeout},
		{"session too long", []joinOpt{withSession(time.Hour)}, kerr.InvalidSessionTimeout},
		{"instance id too long", []joinOpt{withInstance(long)}, kerr.InvalidRequest},
		{"empty instance id", []joinOpt{withInstance("")}, kerr.InvalidRequest},
		{"metadata too large", []joinOpt{withProtocols("range", strings.Repeat("m", 1<<20+1))}, kerr.InvalidRequest},
		{"unknown member of unknown group", []joinOpt{withMember("nobody")}, kerr.UnknownMemberID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.startJoin("a", tt.opts...).fails(tt.want)
			if len(h.c.groups) != 0 {
				t.Fatal("a failed join left a group behind")
			}
		})
	}
	t.Run("group id of the maximum length", func(t *testing.T) {
		h := newHarness(t)
		h.startJoin("a", withGroup(strings.Repeat("x", 255))).fails(kerr.MemberIDRequired)
	})
}

func TestGroupMaxSize(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxGroupSize = 2 })
	h.stableGroup("a", "b")
	h.startJoin("c").fails(kerr.GroupMaxSizeReached)
	// Pending ids count too, so a flood of first joins cannot grow memory.
	h2 := newHarness(t, func(c *Config) { c.MaxGroupSize = 2 })
	h2.startJoin("a").fails(kerr.MemberIDRequired)
	h2.startJoin("b").fails(kerr.MemberIDRequired)
	h2.startJoin("c").fails(kerr.GroupMaxSizeReached)
}

func TestGroupByteBudget(t *testing.T) {
	h := newHarness(t, noDelay, func(c *Config) { c.MaxGroupBytes = 10 })
	j, _ := h.joinNew("a", withProtocols("range", "123456"))
	j.ok()
	h.startJoin("b", withProtocols("range", "123456")).fails(kerr.GroupMaxSizeReached)
}

func TestMaxGroups(t *testing.T) {
	h := newHarness(t, noDelay, func(c *Config) { c.MaxGroups = 1 })
	h.startJoin("a", withVersion(3)).ok()
	h.startJoin("b", withGroup("other")).fails(kerr.CoordinatorNotAvailable)
}

func TestParkedJoinReturnsWhenContextEnds(t *testing.T) {
	h := newHarness(t)
	first := h.startJoin("a").fails(kerr.MemberIDRequired)
	ctx, cancel := contextWithCancel()
	done := make(chan int16)
	go func() {
		done <- h.c.JoinGroup(ctx, Client{ID: "a"}, newJoinRequest(withMember(first.memberID))).ErrorCode
	}()
	cancel()
	if code := <-done; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("error %v", kerr.ErrorForCode(code))
	}
}
