package groups

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's join barrier rules (GroupCoordinator; KIP-134 for the initial delay), which issue 28
// asked to check: the initial rebalance delay applies only to a group that starts empty; a
// rebalance of a group with members completes as soon as every member still in the group has
// rejoined, without waiting for the rebalance timeout, whether the others left or their
// sessions expired; and a member whose session expired can neither commit nor heartbeat, so
// it cannot keep working on partitions the next generation gives to others. The clock only
// moves where a case says so: a barrier that needs time would stay parked.
func TestJoinBarrierCompletionRules(t *testing.T) {
	type event func(h *harness, ids []string, gen int32)
	leave := func(id string) event {
		return func(h *harness, _ []string, _ int32) {
			r := kmsg.NewPtrLeaveGroupRequest()
			r.Version = 5
			r.Group = testGroup
			m := kmsg.NewLeaveGroupRequestMember()
			m.MemberID = id
			r.Members = []kmsg.LeaveGroupRequestMember{m}
			if code := h.c.LeaveGroup(r).Members[0].ErrorCode; code != 0 {
				h.t.Fatalf("LeaveGroup: %v", kerr.ErrorForCode(code))
			}
		}
	}
	cases := []struct {
		name string
		// before runs on the stable group of a, b, c before a and b rejoin; c rejoins when
		// cRejoins.
		before   func(h *harness, ids []string, gen int32)
		cRejoins bool
		members  int
	}{
		{name: "every member rejoins", cRejoins: true, members: 3},
		{name: "a member left", before: func(h *harness, ids []string, gen int32) { leave(ids[2])(h, ids, gen) }, members: 2},
		{name: "a member's session expired", members: 2, before: func(h *harness, ids []string, gen int32) {
			// a and b keep heartbeating; c does not, and its session ends.
			for range 3 {
				h.clock.Advance(testSession / 4)
				h.mustHeartbeat(ids[0], gen, nil)
				h.mustHeartbeat(ids[1], gen, nil)
			}
			h.clock.Advance(testSession / 4)
			h.mustState("PreparingRebalance")
			if err := h.heartbeat(ids[2], gen); err != kerr.UnknownMemberID {
				h.t.Fatalf("heartbeat of the expired member = %v, want UNKNOWN_MEMBER_ID", err)
			}
			if err := h.c.ValidateOffsetCommit(testGroup, ids[2], nil, gen); err != kerr.UnknownMemberID {
				h.t.Fatalf("commit of the expired member = %v, want UNKNOWN_MEMBER_ID", err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t) // with Kafka's 3 s initial delay
			ids, gen := h.stableGroup("a", "b", "c")
			if tc.before != nil {
				tc.before(h, ids, gen)
			}
			ja := h.startJoin("a", withMember(ids[0])) // the leader rejoins: a rebalance
			jb := h.startJoin("b", withMember(ids[1]))
			joins := []*pendingJoin{ja, jb}
			if tc.cRejoins {
				ja.mustParked() // c has not rejoined yet
				joins = append(joins, h.startJoin("c", withMember(ids[2])))
			}
			for _, j := range joins {
				if r := j.ok(); r.generation != gen+1 {
					t.Fatalf("generation %d, want %d", r.generation, gen+1)
				}
			}
			if got := len(ja.res.members); got != tc.members {
				t.Fatalf("leader got %d members, want %d", got, tc.members)
			}
		})
	}
}

// An empty group that fills again waits for the initial delay again (it starts empty), as
// in Kafka.
func TestInitialDelayAgainAfterGroupEmpties(t *testing.T) {
	h := newHarness(t)
	ids, _ := h.stableGroup("a")
	r := kmsg.NewPtrLeaveGroupRequest()
	r.Version = 5
	r.Group = testGroup
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = ids[0]
	r.Members = []kmsg.LeaveGroupRequestMember{m}
	h.c.LeaveGroup(r)
	j, _ := h.joinNew("b")
	h.clock.Advance(3*time.Second - time.Millisecond)
	j.mustParked()
	h.clock.Advance(time.Millisecond)
	j.ok()
}
