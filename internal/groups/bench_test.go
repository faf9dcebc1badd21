package groups

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func BenchmarkHeartbeat(b *testing.B) {
	h := newHarness(b)
	ids, gen := h.stableGroup("a")
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation = testGroup, ids[0], gen
	b.ReportAllocs()
	for b.Loop() {
		if h.c.Heartbeat(req).ErrorCode != 0 {
			b.Fatal("heartbeat failed")
		}
	}
}

// BenchmarkRebalanceOneMember measures a full rebalance round of a one-member group: the
// leader rejoins (the barrier completes at once) and syncs its assignment.
func BenchmarkRebalanceOneMember(b *testing.B) {
	h := newHarness(b)
	ids, _ := h.stableGroup("a")
	join := newJoinRequest(withMember(ids[0]))
	client := Client{ID: "a"}
	b.ReportAllocs()
	for b.Loop() {
		jr := h.c.JoinGroup(b.Context(), client, join)
		if jr.ErrorCode != 0 {
			b.Fatal("join failed")
		}
		sr := syncRequest(ids[0], jr.Generation, ids[0], "assignment")
		if h.c.SyncGroup(b.Context(), sr).ErrorCode != 0 {
			b.Fatal("sync failed")
		}
	}
}
