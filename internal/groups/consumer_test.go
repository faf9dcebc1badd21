package groups

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeTopics is a Topics over a fixed map.
type fakeTopics map[string]TopicMetadata

func (f fakeTopics) Describe(_ context.Context, names []string) (map[string]TopicMetadata, error) {
	out := map[string]TopicMetadata{}
	for _, n := range names {
		if md, ok := f[n]; ok {
			out[n] = md
		}
	}
	return out, nil
}

func (f fakeTopics) All(context.Context) (map[string]TopicMetadata, error) { return f, nil }

func topicID(name string) [16]byte {
	var id [16]byte
	copy(id[:], name)
	id[15] = 1
	return id
}

func testTopics(counts map[string]int32) fakeTopics {
	f := fakeTopics{}
	for n, c := range counts {
		f[n] = TopicMetadata{ID: topicID(n), Partitions: c}
	}
	return f
}

// cclient simulates a consumer-protocol client: it owns what its last assignment said, giving
// partitions up at once when an assignment drops them.
type cclient struct {
	h        *harness
	topics   fakeTopics
	id       string
	instance *string
	epoch    int32
	owned    partitionSet
	names    []string
	regex    *string
}

func (h *harness) consumer(id string, topics fakeTopics, names ...string) *cclient {
	return &cclient{h: h, topics: topics, id: id, owned: partitionSet{}, names: names}
}

func (cl *cclient) request() *kmsg.ConsumerGroupHeartbeatRequest {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch, req.InstanceID = testGroup, cl.id, cl.epoch, cl.instance
	req.RebalanceTimeoutMillis = 30000
	req.SubscribedTopicNames = cl.names
	req.SubscribedTopicRegex = cl.regex
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	for _, p := range cl.owned.sorted() {
		n := len(req.Topics)
		if n == 0 || req.Topics[n-1].TopicID != topicID(p.topic) {
			t := kmsg.NewConsumerGroupHeartbeatRequestTopic()
			t.TopicID = topicID(p.topic)
			req.Topics = append(req.Topics, t)
			n++
		}
		req.Topics[n-1].Partitions = append(req.Topics[n-1].Partitions, p.partition)
	}
	return req
}

func (cl *cclient) send(req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := cl.h.c.ConsumerGroupHeartbeat(context.Background(), req, Client{ID: "test"}, cl.topics)
	if resp.ErrorCode != 0 {
		return resp
	}
	cl.epoch = resp.MemberEpoch
	if resp.Assignment != nil {
		byID := map[[16]byte]string{}
		for n := range cl.topics {
			byID[topicID(n)] = n
		}
		cl.owned = partitionSet{}
		for _, t := range resp.Assignment.Topics {
			for _, p := range t.Partitions {
				cl.owned[topicPartition{byID[t.TopicID], p}] = struct{}{}
			}
		}
	}
	return resp
}

func (cl *cclient) beat() {
	cl.h.t.Helper()
	if resp := cl.send(cl.request()); resp.ErrorCode != 0 {
		cl.h.t.Fatalf("%s heartbeat: %v", cl.id, kerr.ErrorForCode(resp.ErrorCode))
	}
}

// settle heartbeats every client until nothing changes, checking after every heartbeat that no
// partition is owned by two clients: the protocol revokes before it assigns.
func settle(t *testing.T, cls ...*cclient) {
	t.Helper()
	for round := 0; round < 20; round++ {
		changed := false
		for _, cl := range cls {
			before, epoch := cl.owned.clone(), cl.epoch
			cl.beat()
			changed = changed || !before.equal(cl.owned) || epoch != cl.epoch
			seen := map[topicPartition]string{}
			for _, o := range cls {
				for p := range o.owned {
					if prev, dup := seen[p]; dup {
						t.Fatalf("round %d: %v owned by %s and %s", round, p, prev, o.id)
					}
					seen[p] = o.id
				}
			}
		}
		if !changed {
			return
		}
	}
	t.Fatal("the group did not settle")
}

func ownedCount(cls ...*cclient) int {
	n := 0
	for _, cl := range cls {
		n += len(cl.owned)
	}
	return n
}

func (h *harness) describeConsumer() kmsg.ConsumerGroupDescribeResponseGroup {
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Version = 1
	req.Groups = []string{testGroup}
	return h.c.ConsumerGroupDescribe(req).Groups[0]
}

func TestConsumerGroupMembersJoinAndLeaveRevokingFirst(t *testing.T) {
	h := newHarness(t)
	topics := testTopics(map[string]int32{"t": 6})
	var cls []*cclient
	for i := range 3 {
		cls = append(cls, h.consumer(fmt.Sprintf("m%d", i), topics, "t"))
		cls[i].beat()
		settle(t, cls...)
		if got := ownedCount(cls...); got != 6 {
			t.Fatalf("%d members own %d partitions, want 6", i+1, got)
		}
	}
	for _, cl := range cls {
		if len(cl.owned) != 2 {
			t.Fatalf("%s owns %v, want 2 partitions", cl.id, cl.owned.sorted())
		}
	}
	d := h.describeConsumer()
	if d.State != "Stable" || len(d.Members) != 3 || d.AssignorName != AssignorUniform {
		t.Fatalf("described %+v", d)
	}
	// A member leaves: the others take its partitions.
	leave := cls[0].request()
	leave.MemberEpoch = epochLeave
	if resp := cls[0].send(leave); resp.ErrorCode != 0 || resp.MemberEpoch != -1 {
		t.Fatalf("leave: %+v", resp)
	}
	settle(t, cls[1:]...)
	if got := ownedCount(cls[1:]...); got != 6 {
		t.Fatalf("after a leave the members own %d partitions, want 6", got)
	}
}

func TestConsumerGroupSessionExpiryFencesTheMember(t *testing.T) {
	h := newHarness(t)
	topics := testTopics(map[string]int32{"t": 4})
	a, b := h.consumer("a", topics, "t"), h.consumer("b", topics, "t")
	a.beat()
	b.beat()
	settle(t, a, b)
	// b goes silent; a keeps heartbeating.
	for range 10 {
		h.clock.Advance(5 * time.Second)
		a.beat()
	}
	if len(a.owned) != 4 {
		t.Fatalf("a owns %v after b's session expired, want all 4", a.owned.sorted())
	}
	if resp := b.send(b.request()); resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("fenced member heartbeat: %v, want UNKNOWN_MEMBER_ID", kerr.ErrorForCode(resp.ErrorCode))
	}
}

func TestConsumerGroupRevocationTimeoutFences(t *testing.T) {
	h := newHarness(t)
	topics := testTopics(map[string]int32{"t": 2})
	a := h.consumer("a", topics, "t")
	a.beat()
	b := h.consumer("b", topics, "t")
	b.beat()
	// a is told to revoke one partition but never does; b waits for it.
	resp := a.h.c.ConsumerGroupHeartbeat(context.Background(), a.request(), Client{}, topics)
	if resp.ErrorCode != 0 || resp.Assignment == nil || len(resp.Assignment.Topics[0].Partitions) != 1 {
		t.Fatalf("a was not asked to revoke: %+v", resp)
	}
	b.beat()
	if len(b.owned) != 0 {
		t.Fatalf("b got %v while a still owns it", b.owned.sorted())
	}
	h.clock.Advance(31 * time.Second) // a's rebalance timeout
	b.beat()
	b.beat()
	if len(b.owned) != 2 {
		t.Fatalf("b owns %v after a was fenced, want both", b.owned.sorted())
	}
}

func TestConsumerGroupEpochChecks(t *testing.T) {
	h := newHarness(t)
	topics := testTopics(map[string]int32{"t": 2})
	a := h.consumer("a", topics, "t")
	a.beat()
	req := a.request()
	req.MemberEpoch = a.epoch + 1
	if resp := a.send(req); resp.ErrorCode != kerr.FencedMemberEpoch.Code {
		t.Fatalf("greater epoch: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if err := h.c.ValidateOffsetCommitVersion(testGroup, "a", nil, a.epoch, 9); err != nil {
		t.Fatalf("commit at the member's epoch: %v", err)
	}
	if err := h.c.ValidateOffsetCommitVersion(testGroup, "a", nil, a.epoch-1, 9); err != kerr.StaleMemberEpoch {
		t.Fatalf("commit at an old epoch: %v", err)
	}
	if err := h.c.ValidateOffsetCommitVersion(testGroup, "a", nil, a.epoch, 8); err != kerr.UnsupportedVersion {
		t.Fatalf("commit v8 from a consumer-protocol member: %v", err)
	}
	if err := h.c.ValidateOffsetCommitVersion(testGroup, "", nil, -1, 9); err != kerr.UnknownMemberID {
		t.Fatalf("admin commit to a group with members: %v", err)
	}
	if err := h.c.ValidateOffsetFetch(testGroup, kmsg.StringPtr("a"), a.epoch-1); err != kerr.StaleMemberEpoch {
		t.Fatalf("fetch at an old epoch: %v", err)
	}
	if err := h.c.ValidateOffsetFetch(testGroup, nil, -1); err != nil {
		t.Fatalf("admin fetch: %v", err)
	}
}

func TestConsumerGroupStaticMemberComesBackToItsPartitions(t *testing.T) {
	h := newHarness(t)
	topics := testTopics(map[string]int32{"t": 4})
	a, b := h.consumer("a1", topics, "t"), h.consumer("b", topics, "t")
	a.instance = kmsg.StringPtr("inst-a")
	a.beat()
	b.beat()
	settle(t, a, b)
	had, epoch := a.owned.clone(), h.describeConsumer().Epoch
	// A second process with the same instance id is refused while the first is there.
	dup := h.consumer("a2", topics, "t")
	dup.instance = a.instance
	if resp := dup.send(dup.request()); resp.ErrorCode != kerr.UnreleasedInstanceID.Code {
		t.Fatalf("duplicate instance: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	leave := a.request()
	leave.MemberEpoch = epochStaticLeave
	if resp := a.send(leave); resp.ErrorCode != 0 || resp.MemberEpoch != epochStaticLeave {
		t.Fatalf("static leave: %+v", resp)
	}
	b.beat()
	if len(b.owned) != 2 {
		t.Fatalf("b took the static member's partitions: %v", b.owned.sorted())
	}
	dup.beat()
	if !dup.owned.equal(had) || h.describeConsumer().Epoch != epoch {
		t.Fatalf("restarted instance got %v (had %v), epoch %d (was %d)", dup.owned.sorted(), had.sorted(), h.describeConsumer().Epoch, epoch)
	}
}

func TestConsumerGroupRegexSubscription(t *testing.T) {
	h := newHarness(t)
	topics := testTopics(map[string]int32{"orders-eu": 2, "orders-us": 2, "payments": 2})
	a := h.consumer("a", topics)
	a.regex = kmsg.StringPtr("orders-.*")
	a.beat()
	settle(t, a)
	if len(a.owned) != 4 {
		t.Fatalf("regex member owns %v, want the 4 orders partitions", a.owned.sorted())
	}
	bad := h.consumer("b", topics)
	bad.regex = kmsg.StringPtr("orders-(")
	if resp := bad.send(bad.request()); resp.ErrorCode != kerr.InvalidRegularExpression.Code {
		t.Fatalf("bad regex: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}

func TestConsumerGroupRangeAssignorAndTypes(t *testing.T) {
	h := newHarness(t, noDelay)
	topics := testTopics(map[string]int32{"t": 3})
	a := h.consumer("a", topics, "t")
	req := a.request()
	req.ServerAssignor = kmsg.StringPtr(AssignorRange)
	a.send(req)
	if d := h.describeConsumer(); d.AssignorName != AssignorRange {
		t.Fatalf("assignor %q", d.AssignorName)
	}
	req = a.request()
	req.ServerAssignor = kmsg.StringPtr("sticky")
	if resp := a.send(req); resp.ErrorCode != kerr.UnsupportedAssignor.Code {
		t.Fatalf("unknown assignor: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	// One type per group id: a classic join for the consumer group is refused.
	j := h.startJoin("c1")
	j.fails(kerr.InconsistentGroupProtocol)
	// ListGroups reports the type and state.
	lreq := kmsg.NewPtrListGroupsRequest()
	lreq.Version = 5
	lreq.TypesFilter = []string{"consumer"}
	groups := h.c.ListGroups(lreq).Groups
	if len(groups) != 1 || groups[0].GroupType != "consumer" || groups[0].GroupState != "Stable" {
		t.Fatalf("listed %+v", groups)
	}
	// A consumer-protocol member for a classic group with members gets GROUP_ID_NOT_FOUND.
	h2 := newHarness(t, noDelay)
	h2.joinNew("c1")
	cl := h2.consumer("x", topics, "t")
	if resp := cl.send(cl.request()); resp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("consumer heartbeat on a classic group: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}

func TestConsumerGroupAdminAPIs(t *testing.T) {
	h := newHarness(t)
	topics := testTopics(map[string]int32{"t": 2, "u": 1})
	a := h.consumer("a", topics, "t")
	a.beat()

	dreq := kmsg.NewPtrDescribeGroupsRequest()
	dreq.Version = 6
	dreq.Groups = []string{testGroup}
	if dg := h.c.DescribeGroups(dreq).Groups[0]; dg.ErrorCode != kerr.GroupIDNotFound.Code || dg.State != "Dead" {
		t.Fatalf("DescribeGroups of a consumer group: %+v", dg)
	}
	subscribed, active, err := h.c.OffsetDeleteGuard(testGroup)
	if err != nil || !active || !subscribed("t") || subscribed("u") {
		t.Fatalf("OffsetDeleteGuard: active %v err %v t %v u %v", active, err, subscribed("t"), subscribed("u"))
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{testGroup}
	if code := h.c.DeleteGroups(context.Background(), del).Groups[0].ErrorCode; code != kerr.NonEmptyGroup.Code {
		t.Fatalf("DeleteGroups with a member: %v", kerr.ErrorForCode(code))
	}
	leave := a.request()
	leave.MemberEpoch = epochLeave
	a.send(leave)
	if d := h.describeConsumer(); d.State != "Empty" || len(d.Members) != 0 {
		t.Fatalf("after the leave: %+v", d)
	}
	if err := h.c.ValidateOffsetCommitVersion(testGroup, "", nil, -1, 9); err != nil {
		t.Fatalf("admin commit to the empty group: %v", err)
	}
	if code := h.c.DeleteGroups(context.Background(), del).Groups[0].ErrorCode; code != 0 {
		t.Fatalf("DeleteGroups of the empty group: %v", kerr.ErrorForCode(code))
	}
	if d := h.describeConsumer(); d.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("described after delete: %+v", d)
	}
	// The id is free for a classic group now: the first JoinGroup asks for a member id
	// instead of refusing the group's type.
	h.startJoin("c1").fails(kerr.MemberIDRequired)
}

func TestConsumerGroupHeartbeatValidation(t *testing.T) {
	h := newHarness(t)
	topics := testTopics(map[string]int32{"t": 1})
	a := h.consumer("", topics, "t")
	// v0: the coordinator names a member that joins without an id.
	req := a.request()
	req.Version = 0
	resp := a.send(req)
	if resp.ErrorCode != 0 || resp.MemberID == nil || *resp.MemberID == "" || resp.MemberEpoch <= 0 {
		t.Fatalf("v0 join: %+v", resp)
	}
	for name, mutate := range map[string]func(*kmsg.ConsumerGroupHeartbeatRequest){
		"v1 without member id": func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID = "" },
		"join owning partitions": func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.Topics = append(r.Topics, kmsg.NewConsumerGroupHeartbeatRequestTopic())
		},
		"join without subscription":      func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = nil },
		"join without rebalance timeout": func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RebalanceTimeoutMillis = -1 },
		"static leave without instance":  func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = epochStaticLeave },
		"empty group id":                 func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Group = "" },
	} {
		cl := h.consumer("x", topics, "t")
		req := cl.request()
		mutate(req)
		if resp := cl.send(req); resp.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("%s: %v, want INVALID_REQUEST", name, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
	// A heartbeat for a group this coordinator does not know (say, after a restart) tells the
	// member to join again.
	ghost := h.consumer("ghost", topics, "t")
	req = ghost.request()
	req.Group, req.MemberEpoch = "unknown", 5
	if resp := ghost.send(req); resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown group: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}
