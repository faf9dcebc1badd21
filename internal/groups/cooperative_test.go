package groups

import (
	"bytes"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func subscription(gen int32, owned ...int32) string {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version = 3
	m.Topics = []string{"t"}
	m.Generation = gen
	if len(owned) > 0 {
		op := kmsg.NewConsumerMemberMetadataOwnedPartition()
		op.Topic = "t"
		op.Partitions = owned
		m.OwnedPartitions = append(m.OwnedPartitions, op)
	}
	return string(m.AppendTo(nil))
}

func assignment(parts ...int32) string {
	a := kmsg.NewConsumerMemberAssignment()
	a.Version = 3
	if len(parts) > 0 {
		at := kmsg.NewConsumerMemberAssignmentTopic()
		at.Topic = "t"
		at.Partitions = parts
		a.Topics = append(a.Topics, at)
	}
	return string(a.AppendTo(nil))
}

// TestCooperativeTwoPhaseRebalance walks the incremental cooperative protocol (KIP-429): the
// coordinator only relays opaque metadata and assignments, and a member whose metadata changed
// in a stable group starts the second rebalance.
func TestCooperativeTwoPhaseRebalance(t *testing.T) {
	h := newHarness(t)
	const proto = "cooperative-sticky"

	// Generation 1: a alone owns p0 and p1.
	ja, a := h.joinNew("a", withProtocols(proto, subscription(-1)))
	h.clock.Advance(3 * time.Second)
	ja.ok()
	h.sync(a, 1, a, assignment(0, 1)).assignment()

	// b joins; a rejoins reporting what it owns. The leader sees both verbatim.
	jb, b := h.joinNew("b", withProtocols(proto, subscription(-1)))
	ra := h.startJoin("a", withMember(a), withProtocols(proto, subscription(1, 0, 1))).ok()
	rb := jb.ok()
	if ra.generation != 2 || rb.generation != 2 || ra.protocol != proto {
		t.Fatalf("phase 1 join %+v %+v", ra, rb)
	}
	meta := map[string]string{}
	for _, m := range ra.members {
		meta[m.MemberID] = string(m.ProtocolMetadata)
	}
	if meta[a] != subscription(1, 0, 1) || meta[b] != subscription(-1) {
		t.Fatal("leader did not get the members' metadata verbatim")
	}
	// Phase 1: p1 is revoked from a and not yet given to b.
	sb := h.sync(b, 2)
	if got := h.sync(a, 2, a, assignment(0), b, assignment()).assignment(); got != assignment(0) {
		t.Fatal("phase 1 assignment of a")
	}
	if sb.assignment() != assignment() {
		t.Fatal("phase 1 assignment of b")
	}
	h.mustState("Stable")

	// Phase 2: a revoked p1 and rejoins with its new ownership; that rebalances the group.
	ja = h.startJoin("a", withMember(a), withProtocols(proto, subscription(2, 0)))
	ja.mustParked()
	if err := h.heartbeat(b, 2); err == nil {
		t.Fatal("b was not told to rejoin")
	}
	rb = h.startJoin("b", withMember(b), withProtocols(proto, subscription(2))).ok()
	ra = ja.ok()
	if ra.generation != 3 || rb.generation != 3 {
		t.Fatalf("phase 2 generations %d %d", ra.generation, rb.generation)
	}
	for _, m := range ra.members {
		if m.MemberID == a && !bytes.Equal(m.ProtocolMetadata, []byte(subscription(2, 0))) {
			t.Fatal("phase 2 metadata of a not relayed verbatim")
		}
	}
	sb = h.sync(b, 3)
	h.sync(a, 3, a, assignment(0), b, assignment(1)).assignment()
	if sb.assignment() != assignment(1) {
		t.Fatal("phase 2 assignment of b")
	}

	// OffsetDelete protects the subscribed topic while the group is active.
	subscribed, active, err := h.c.OffsetDeleteGuard(testGroup)
	if err != nil || !active || !subscribed("t") || subscribed("other") {
		t.Fatalf("guard: active %v err %v t=%v other=%v", active, err, subscribed("t"), subscribed("other"))
	}
}
