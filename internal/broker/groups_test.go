package broker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/versions"
)

// clampVersion is v limited to the versions the table accepts for key.
func clampVersion(t *testing.T, key kmsg.Key, v int16) int16 {
	t.Helper()
	a, ok := versions.Lookup(key.Int16())
	if !ok {
		t.Fatalf("%s is not in the versions table", key.Name())
	}
	return min(max(v, a.Min), a.Max)
}

// A whole group life cycle at every version of every group API: join (with the
// MEMBER_ID_REQUIRED handshake from v4), sync, heartbeat, commit, fetch, describe, list,
// leave, describe the empty group, delete it.
func TestGroupLifeCycleAllVersions(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, groups: fastGroups()})
	g.mkKafkaTopic("cycle", 2)
	c := dialRaw(t, g.addr)
	for v := int16(0); v <= 9; v++ {
		group := fmt.Sprintf("cycle-%d", v)
		assignment := []byte(fmt.Sprintf("assignment-%d", v))
		member, gen := joinAlone(t, c, v, group, assignment, "cycle")

		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Version = clampVersion(t, kmsg.Heartbeat, v)
		hb.Group, hb.MemberID, hb.Generation = group, member, gen
		if resp := c.roundTrip(hb).(*kmsg.HeartbeatResponse); resp.ErrorCode != 0 {
			t.Errorf("Heartbeat v%d: code %d", hb.Version, resp.ErrorCode)
		}

		cv := clampVersion(t, kmsg.OffsetCommit, v)
		meta := fmt.Sprintf("meta-%d", v)
		offset := int64(v) // v0 commits offset 0, which must round-trip too
		commit := commitReq(cv, group, member, gen, "cycle", 1, offset, 7, &meta)
		if codes := commitCodes(c.roundTrip(commit).(*kmsg.OffsetCommitResponse)); codes["cycle/1"] != 0 {
			t.Errorf("OffsetCommit v%d: %v", cv, codes)
		}
		wantEpoch := int32(-1)
		if cv >= 6 {
			wantEpoch = 7
		}
		fv := clampVersion(t, kmsg.OffsetFetch, v)
		got, code := fetchedOffsets(c.roundTrip(fetchReq(fv, group, "cycle", 0, 1)).(*kmsg.OffsetFetchResponse))
		if code != 0 || got["cycle/1"].offset != offset || got["cycle/1"].epoch != wantEpoch || got["cycle/1"].metadata == nil || *got["cycle/1"].metadata != meta || got["cycle/1"].code != 0 {
			t.Errorf("OffsetFetch v%d partition 1: %+v (group code %d); want offset %d, epoch %d, metadata %q", fv, got["cycle/1"], code, offset, wantEpoch, meta)
		}
		if p0 := got["cycle/0"]; p0.offset != -1 || p0.epoch != -1 || p0.code != 0 {
			t.Errorf("OffsetFetch v%d partition 0 (never committed): %+v, want offset -1, epoch -1", fv, p0)
		}

		dv := clampVersion(t, kmsg.DescribeGroups, v)
		describe := kmsg.NewPtrDescribeGroupsRequest()
		describe.Version = dv
		describe.Groups = []string{group}
		dresp := c.roundTrip(describe).(*kmsg.DescribeGroupsResponse)
		if len(dresp.Groups) != 1 {
			t.Fatalf("DescribeGroups v%d: %+v", dv, dresp)
		}
		dg := dresp.Groups[0]
		if dg.ErrorCode != 0 || dg.State != "Stable" || dg.ProtocolType != "consumer" || dg.Protocol != "range" || len(dg.Members) != 1 {
			t.Errorf("DescribeGroups v%d: %+v", dv, dg)
		} else if m := dg.Members[0]; m.MemberID != member || m.ClientID != "raw" || m.ClientHost != "/127.0.0.1" || string(m.MemberAssignment) != string(assignment) {
			t.Errorf("DescribeGroups v%d member: %+v", dv, m)
		}

		lv := clampVersion(t, kmsg.ListGroups, v)
		list := kmsg.NewPtrListGroupsRequest()
		list.Version = lv
		if lv >= 4 {
			list.StatesFilter = []string{"stable"}
		}
		lresp := c.roundTrip(list).(*kmsg.ListGroupsResponse)
		i := slices.IndexFunc(lresp.Groups, func(lg kmsg.ListGroupsResponseGroup) bool { return lg.Group == group })
		if lresp.ErrorCode != 0 || i < 0 || lresp.Groups[i].ProtocolType != "consumer" {
			t.Errorf("ListGroups v%d: %+v lacks %s", lv, lresp, group)
		} else if lv >= 4 && lresp.Groups[i].GroupState != "Stable" {
			t.Errorf("ListGroups v%d: state %q", lv, lresp.Groups[i].GroupState)
		}

		leave := kmsg.NewPtrLeaveGroupRequest()
		leave.Version = clampVersion(t, kmsg.LeaveGroup, v)
		leave.Group = group
		if leave.Version >= 3 {
			lm := kmsg.NewLeaveGroupRequestMember()
			lm.MemberID = member
			leave.Members = append(leave.Members, lm)
		} else {
			leave.MemberID = member
		}
		lgresp := c.roundTrip(leave).(*kmsg.LeaveGroupResponse)
		if lgresp.ErrorCode != 0 || (leave.Version >= 3 && (len(lgresp.Members) != 1 || lgresp.Members[0].ErrorCode != 0 || lgresp.Members[0].MemberID != member)) {
			t.Errorf("LeaveGroup v%d: %+v", leave.Version, lgresp)
		}

		// Without members the group lives on through its committed offsets.
		dg = c.roundTrip(describe).(*kmsg.DescribeGroupsResponse).Groups[0]
		if dg.ErrorCode != 0 || dg.State != "Empty" || dg.ProtocolType != "consumer" || len(dg.Members) != 0 {
			t.Errorf("DescribeGroups v%d after leaving: %+v, want Empty", dv, dg)
		}

		del := kmsg.NewPtrDeleteGroupsRequest()
		del.Version = clampVersion(t, kmsg.DeleteGroups, v)
		del.Groups = []string{group}
		delresp := c.roundTrip(del).(*kmsg.DeleteGroupsResponse)
		if len(delresp.Groups) != 1 || delresp.Groups[0].Group != group || delresp.Groups[0].ErrorCode != 0 {
			t.Errorf("DeleteGroups v%d: %+v", del.Version, delresp)
		}
		got, code = fetchedOffsets(c.roundTrip(fetchReq(fv, group, "cycle", 1)).(*kmsg.OffsetFetchResponse))
		if code != 0 || got["cycle/1"].offset != -1 {
			t.Errorf("OffsetFetch v%d after DeleteGroups: %+v (code %d), want -1", fv, got, code)
		}
		dg = c.roundTrip(describe).(*kmsg.DescribeGroupsResponse).Groups[0]
		if dg.State != "Dead" {
			t.Errorf("DescribeGroups v%d after DeleteGroups: state %q, want Dead", dv, dg.State)
		}
	}
}

// Commits round-trip exactly (offset 0, null and empty metadata, leader epoch); partitions
// that do not exist are refused; a null topic list fetches everything; v8 fetches several
// groups at once.
func TestOffsetCommitFetch(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, groups: fastGroups()})
	g.mkKafkaTopic("orders", 3)
	g.mkKafkaTopic("audit", 1)
	c := dialRaw(t, g.addr)

	// An admin-style commit (no member, generation -1) to a group without members.
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 9
	req.Group, req.Generation = "g1", -1
	for _, tt := range []struct {
		topic string
		parts []int32
	}{{"orders", []int32{0, 1, 2, 3, -1}}, {"audit", []int32{0}}, {"missing", []int32{0, 1}}} {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = tt.topic
		for _, p := range tt.parts {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, int64(p)*100, int32(p)
			switch p {
			case 1:
				rp.Metadata = kmsg.StringPtr("")
			case 2:
				rp.Metadata = kmsg.StringPtr("consumer-1 generation 5")
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	codes := commitCodes(c.roundTrip(req).(*kmsg.OffsetCommitResponse))
	unknown := kerr.UnknownTopicOrPartition.Code
	want := map[string]int16{"orders/0": 0, "orders/1": 0, "orders/2": 0, "orders/3": unknown, "orders/-1": unknown,
		"audit/0": 0, "missing/0": unknown, "missing/1": unknown}
	if fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Fatalf("commit codes %v, want %v", codes, want)
	}

	for v := int16(1); v <= 9; v++ {
		got, code := fetchedOffsets(c.roundTrip(fetchReq(v, "g1", "orders", 0, 1, 2, 3)).(*kmsg.OffsetFetchResponse))
		if code != 0 {
			t.Fatalf("OffsetFetch v%d: code %d", v, code)
		}
		for p, w := range map[int32]fetched{
			0: {offset: 0, epoch: 0, metadata: kmsg.StringPtr("")},
			1: {offset: 100, epoch: 1, metadata: kmsg.StringPtr("")},
			2: {offset: 200, epoch: 2, metadata: kmsg.StringPtr("consumer-1 generation 5")},
			3: {offset: -1, epoch: -1, metadata: kmsg.StringPtr("")},
		} {
			if v < 5 { // the leader epoch is in the answer from v5
				w.epoch = -1
			}
			f := got[tp("orders", p)]
			if f.offset != w.offset || f.epoch != w.epoch || f.code != 0 || f.metadata == nil || *f.metadata != *w.metadata {
				t.Errorf("OffsetFetch v%d orders/%d: %+v (metadata %v), want %+v", v, p, f, deref(f.metadata), w)
			}
		}
		if v < 2 {
			continue
		}
		all, code := fetchedOffsets(c.roundTrip(fetchReq(v, "g1", "")).(*kmsg.OffsetFetchResponse))
		if code != 0 || len(all) != 4 || all["audit/0"].offset != 0 || all["orders/2"].offset != 200 {
			t.Errorf("OffsetFetch v%d of everything: %+v (code %d)", v, all, code)
		}
	}

	// v8: several groups in one request, an unknown group answers -1 without an error.
	multi := kmsg.NewPtrOffsetFetchRequest()
	multi.Version = 8
	for _, name := range []string{"g1", "nobody"} {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = name
		rt := kmsg.NewOffsetFetchRequestGroupTopic()
		rt.Topic, rt.Partitions = "orders", []int32{2}
		rg.Topics = append(rg.Topics, rt)
		multi.Groups = append(multi.Groups, rg)
	}
	mresp := c.roundTrip(multi).(*kmsg.OffsetFetchResponse)
	if len(mresp.Groups) != 2 || mresp.Groups[0].Group != "g1" || mresp.Groups[1].Group != "nobody" {
		t.Fatalf("multi-group fetch: %+v", mresp)
	}
	if p := mresp.Groups[0].Topics[0].Partitions[0]; p.Offset != 200 || mresp.Groups[0].ErrorCode != 0 {
		t.Errorf("multi-group fetch g1: %+v", mresp.Groups[0])
	}
	if p := mresp.Groups[1].Topics[0].Partitions[0]; p.Offset != -1 || mresp.Groups[1].ErrorCode != 0 {
		t.Errorf("multi-group fetch nobody: %+v", mresp.Groups[1])
	}

	// The committing group shows up as Empty with no protocol type.
	list := c.roundTrip(kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse)
	if !slices.ContainsFunc(list.Groups, func(lg kmsg.ListGroupsResponseGroup) bool { return lg.Group == "g1" }) {
		t.Errorf("ListGroups %+v lacks g1", list.Groups)
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// Kafka's membership rules for commits: once a group has members only they may commit, for
// the current generation; a generation the coordinator does not know is refused.
func TestOffsetCommitMembership(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, groups: fastGroups()})
	g.mkKafkaTopic("t", 1)
	c := dialRaw(t, g.addr)
	for _, tt := range []struct {
		name       string
		member     string
		generation int32
		want       int16
	}{
		{"generation of an unknown group", "", 3, kerr.IllegalGeneration.Code},
		{"member of an unknown group", "ghost", -1, kerr.UnknownMemberID.Code},
	} {
		codes := commitCodes(c.roundTrip(commitReq(8, "g", tt.member, tt.generation, "t", 0, 1, -1, nil)).(*kmsg.OffsetCommitResponse))
		if codes["t/0"] != tt.want {
			t.Errorf("%s: code %d, want %d", tt.name, codes["t/0"], tt.want)
		}
	}
	member, gen := joinAlone(t, c, 9, "g", []byte("a"), "t")
	for _, tt := range []struct {
		name       string
		member     string
		generation int32
		want       int16
	}{
		{"admin commit to a group with members", "", -1, kerr.UnknownMemberID.Code},
		{"unknown member", "ghost", gen, kerr.UnknownMemberID.Code},
		{"stale generation", member, gen - 1, kerr.IllegalGeneration.Code},
		{"member of the current generation", member, gen, 0},
	} {
		codes := commitCodes(c.roundTrip(commitReq(8, "g", tt.member, tt.generation, "t", 0, 5, -1, nil)).(*kmsg.OffsetCommitResponse))
		if codes["t/0"] != tt.want {
			t.Errorf("%s: code %d, want %d", tt.name, codes["t/0"], tt.want)
		}
	}
	// A partition that does not exist is refused before the membership check.
	codes := commitCodes(c.roundTrip(commitReq(8, "g", "ghost", gen, "t", 1, 5, -1, nil)).(*kmsg.OffsetCommitResponse))
	if codes["t/1"] != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("missing partition: code %d", codes["t/1"])
	}
	// Metadata beyond offset.metadata.max.bytes is refused.
	long := string(make([]byte, 4097))
	codes = commitCodes(c.roundTrip(commitReq(8, "g", member, gen, "t", 0, 5, -1, &long)).(*kmsg.OffsetCommitResponse))
	if codes["t/0"] != kerr.OffsetMetadataTooLarge.Code {
		t.Errorf("long metadata: code %d", codes["t/0"])
	}
}

// Without the bridge nothing can be stored: the offset APIs answer COORDINATOR_LOAD_IN_PROGRESS
// (retriable), while group membership works in memory.
func TestGroupsWithoutBridge(t *testing.T) {
	g := startGateway(t, gatewayOpts{groups: fastGroups()})
	c := dialRaw(t, g.addr)
	member, gen := joinAlone(t, c, 9, "g", []byte("a"), "t")
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.Generation = 4, "g", member, gen
	if resp := c.roundTrip(hb).(*kmsg.HeartbeatResponse); resp.ErrorCode != 0 {
		t.Errorf("Heartbeat: code %d", resp.ErrorCode)
	}
	loading := kerr.CoordinatorLoadInProgress.Code
	for _, v := range []int16{2, 9} {
		codes := commitCodes(c.roundTrip(commitReq(v, "g", member, gen, "t", 0, 1, -1, nil)).(*kmsg.OffsetCommitResponse))
		if codes["t/0"] != loading {
			t.Errorf("OffsetCommit v%d: %v", v, codes)
		}
	}
	got, code := fetchedOffsets(c.roundTrip(fetchReq(1, "g", "t", 0)).(*kmsg.OffsetFetchResponse))
	if code != 0 || got["t/0"].code != loading || got["t/0"].offset != -1 {
		t.Errorf("OffsetFetch v1: %+v (code %d), want 14 on the partition", got, code)
	}
	for _, v := range []int16{2, 7, 8, 9} {
		got, code := fetchedOffsets(c.roundTrip(fetchReq(v, "g", "t", 0)).(*kmsg.OffsetFetchResponse))
		if code != loading || len(got) != 0 {
			t.Errorf("OffsetFetch v%d: %+v (code %d), want group error 14 and nothing else", v, got, code)
		}
	}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "g"
	if resp := c.roundTrip(od).(*kmsg.OffsetDeleteResponse); resp.ErrorCode != loading {
		t.Errorf("OffsetDelete: code %d", resp.ErrorCode)
	}
	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Groups = []string{"g"}
	if dg := c.roundTrip(describe).(*kmsg.DescribeGroupsResponse).Groups[0]; dg.State != "Stable" || len(dg.Members) != 1 {
		t.Errorf("DescribeGroups: %+v", dg)
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"g", "other"}
	dresp := c.roundTrip(del).(*kmsg.DeleteGroupsResponse)
	if dresp.Groups[0].ErrorCode != kerr.NonEmptyGroup.Code || dresp.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("DeleteGroups: %+v", dresp.Groups)
	}
}

// OffsetDelete as Kafka decides it.
func TestOffsetDelete(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, groups: fastGroups()})
	g.mkKafkaTopic("subscribed", 2)
	g.mkKafkaTopic("other", 1)
	c := dialRaw(t, g.addr)
	deleteReq := func(group string, topics map[string][]int32) *kmsg.OffsetDeleteResponse {
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = group
		for _, name := range slices.Sorted(maps.Keys(topics)) {
			rt := kmsg.NewOffsetDeleteRequestTopic()
			rt.Topic = name
			for _, p := range topics[name] {
				rp := kmsg.NewOffsetDeleteRequestTopicPartition()
				rp.Partition = p
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		return c.roundTrip(req).(*kmsg.OffsetDeleteResponse)
	}
	codes := func(resp *kmsg.OffsetDeleteResponse) map[string]int16 {
		out := map[string]int16{}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				out[tp(t.Topic, p.Partition)] = p.ErrorCode
			}
		}
		return out
	}

	if resp := deleteReq("nobody", map[string][]int32{"other": {0}}); resp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("unknown group: code %d", resp.ErrorCode)
	}

	member, gen := joinAlone(t, c, 9, "g", []byte("a"), "subscribed")
	for _, tt := range []struct {
		topic string
		p     int32
	}{{"subscribed", 0}, {"subscribed", 1}, {"other", 0}} {
		if cc := commitCodes(c.roundTrip(commitReq(9, "g", member, gen, tt.topic, tt.p, 3, -1, nil)).(*kmsg.OffsetCommitResponse)); cc[tp(tt.topic, tt.p)] != 0 {
			t.Fatalf("commit %s/%d: %v", tt.topic, tt.p, cc)
		}
	}
	resp := deleteReq("g", map[string][]int32{"subscribed": {0}, "other": {0, 5}, "missing": {0}})
	want := map[string]int16{"subscribed/0": kerr.GroupSubscribedToTopic.Code, "other/0": 0,
		"other/5": kerr.UnknownTopicOrPartition.Code, "missing/0": kerr.UnknownTopicOrPartition.Code}
	if resp.ErrorCode != 0 || fmt.Sprint(codes(resp)) != fmt.Sprint(want) {
		t.Errorf("active group: code %d, partitions %v; want %v", resp.ErrorCode, codes(resp), want)
	}
	got, _ := fetchedOffsets(c.roundTrip(fetchReq(9, "g", "")).(*kmsg.OffsetFetchResponse))
	if _, ok := got["other/0"]; ok || got["subscribed/0"].offset != 3 || got["subscribed/1"].offset != 3 {
		t.Errorf("after deleting other/0: %+v", got)
	}

	// Once the member left, subscribed topics may go too.
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group, leave.MemberID = 2, "g", member
	c.roundTrip(leave)
	resp = deleteReq("g", map[string][]int32{"subscribed": {0}})
	if resp.ErrorCode != 0 || codes(resp)["subscribed/0"] != 0 {
		t.Errorf("empty group: %+v", resp)
	}
	got, _ = fetchedOffsets(c.roundTrip(fetchReq(9, "g", "")).(*kmsg.OffsetFetchResponse))
	if len(got) != 1 || got["subscribed/1"].offset != 3 {
		t.Errorf("after deleting subscribed/0: %+v", got)
	}

	// A group with members that is not a consumer group keeps everything.
	join := joinReq(9, "connect", "", "subscribed")
	join.ProtocolType = "connect"
	join.MemberID = c.roundTrip(join).(*kmsg.JoinGroupResponse).MemberID
	if jr := c.roundTrip(join).(*kmsg.JoinGroupResponse); jr.ErrorCode != 0 {
		t.Fatalf("join connect group: %+v", jr)
	}
	if resp := deleteReq("connect", map[string][]int32{"other": {0}}); resp.ErrorCode != kerr.NonEmptyGroup.Code {
		t.Errorf("non-consumer group with members: code %d", resp.ErrorCode)
	}
}

// A JoinGroup parked in a rebalance holds up only its own connection: the other member
// heartbeats on its connection and learns it must rejoin; when it rejoins, both parked joins
// complete with the next generation.
func TestParkedJoinDoesNotBlockOtherConnections(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, groups: fastGroups()})
	first, second := dialRaw(t, g.addr), dialRaw(t, g.addr)
	member1, gen := joinAlone(t, first, 9, "g", []byte("a"), "t")

	// A second member joins: the group rebalances and its join waits for member1.
	join2 := joinReq(9, "g", "", "t")
	join2.MemberID = second.roundTrip(join2).(*kmsg.JoinGroupResponse).MemberID
	second.send(join2, 1)
	waitMembers(t, first, "g", 2)

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.Generation = 4, "g", member1, gen
	if resp := first.roundTrip(hb).(*kmsg.HeartbeatResponse); resp.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat during the rebalance: code %d, want REBALANCE_IN_PROGRESS", resp.ErrorCode)
	}
	rejoin := joinReq(9, "g", member1, "t")
	r1 := first.roundTrip(rejoin).(*kmsg.JoinGroupResponse)
	r2 := readResponse(t, second, join2).(*kmsg.JoinGroupResponse)
	if r1.ErrorCode != 0 || r2.ErrorCode != 0 || r1.Generation != gen+1 || r2.Generation != gen+1 {
		t.Fatalf("joins after the rebalance: %+v / %+v, want generation %d", r1, r2, gen+1)
	}
	if r1.LeaderID != member1 || len(r1.Members) != 2 || len(r2.Members) != 0 {
		t.Errorf("leader %s with %d members, follower sees %d members", r1.LeaderID, len(r1.Members), len(r2.Members))
	}
}

// waitMembers waits until DescribeGroups shows n members in group.
func waitMembers(t *testing.T, c *rawConn, group string, n int) {
	t.Helper()
	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Groups = []string{group}
	deadline := time.Now().Add(10 * time.Second)
	for len(c.roundTrip(describe).(*kmsg.DescribeGroupsResponse).Groups[0].Members) != n {
		if time.Now().After(deadline) {
			t.Fatalf("group %s never had %d members", group, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readResponse reads the answer to req, sent earlier with send.
func readResponse(t *testing.T, c *rawConn, req kmsg.Request) kmsg.Response {
	t.Helper()
	f := c.frame()
	if f == nil {
		t.Fatal("connection closed")
	}
	resp := req.ResponseKind()
	body := f[4:]
	if resp.IsFlexible() {
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	return resp
}

// BeginShutdown answers parked joins at once, so a shutdown does not wait for rebalances.
func TestBeginShutdownReleasesParkedJoins(t *testing.T) {
	g := startGateway(t, gatewayOpts{groups: fastGroups()})
	first, second := dialRaw(t, g.addr), dialRaw(t, g.addr)
	joinAlone(t, first, 9, "g", []byte("a"), "t")
	join2 := joinReq(9, "g", "", "t")
	join2.MemberID = second.roundTrip(join2).(*kmsg.JoinGroupResponse).MemberID
	second.send(join2, 1) // parks: the first member has not rejoined
	waitMembers(t, first, "g", 2)
	g.b.BeginShutdown()
	if r := readResponse(t, second, join2).(*kmsg.JoinGroupResponse); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Errorf("parked join after BeginShutdown: code %d, want COORDINATOR_NOT_AVAILABLE", r.ErrorCode)
	}
}

// When Iggy cannot say whether a topic exists, a commit is answered with a retriable code,
// never with a refusal; names no Kafka topic can have are unknown without asking Iggy.
func TestOffsetCommitTopicChecks(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		topic string
		code  int16
	}{
		{"connection", &iggy.ConnError{Op: "get_topic", Err: errors.New("refused")}, "orders", kerr.CoordinatorLoadInProgress.Code},
		{"deadline", context.DeadlineExceeded, "orders", kerr.CoordinatorLoadInProgress.Code},
		{"unauthorized", &iggy.Error{Code: iggy.CodeUnauthorized, Op: "get_topic"}, "orders", kerr.TopicAuthorizationFailed.Code},
		{"invalid name", context.DeadlineExceeded, "no spaces allowed", kerr.UnknownTopicOrPartition.Code},
		{"empty name", context.DeadlineExceeded, "", kerr.UnknownTopicOrPartition.Code},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := startGateway(t, gatewayOpts{bridge: true, wrap: func(api iggy.API) iggy.API { return failingIggy{api, tt.err} }})
			c := dialRaw(t, g.addr)
			codes := commitCodes(c.roundTrip(commitReq(9, "g", "", -1, tt.topic, 0, 1, -1, nil)).(*kmsg.OffsetCommitResponse))
			if codes[tp(tt.topic, 0)] != tt.code {
				t.Errorf("commit: code %d, want %d", codes[tp(tt.topic, 0)], tt.code)
			}
		})
	}
}

// Group ids longer than the limit are refused with INVALID_GROUP_ID by every group API.
func TestGroupIDLimit(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, groups: fastGroups()})
	g.mkKafkaTopic("t", 1)
	c := dialRaw(t, g.addr)
	long := strings.Repeat("g", 256)
	invalid := kerr.InvalidGroupID.Code
	if r := c.roundTrip(joinReq(9, long, "", "t")).(*kmsg.JoinGroupResponse); r.ErrorCode != invalid {
		t.Errorf("JoinGroup: code %d", r.ErrorCode)
	}
	if codes := commitCodes(c.roundTrip(commitReq(9, long, "", -1, "t", 0, 1, -1, nil)).(*kmsg.OffsetCommitResponse)); codes["t/0"] != invalid {
		t.Errorf("OffsetCommit: %v", codes)
	}
	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Groups = []string{long}
	if dg := c.roundTrip(describe).(*kmsg.DescribeGroupsResponse).Groups[0]; dg.ErrorCode != invalid {
		t.Errorf("DescribeGroups: code %d", dg.ErrorCode)
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{long}
	if dg := c.roundTrip(del).(*kmsg.DeleteGroupsResponse).Groups[0]; dg.ErrorCode != invalid {
		t.Errorf("DeleteGroups: code %d", dg.ErrorCode)
	}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = long
	if r := c.roundTrip(od).(*kmsg.OffsetDeleteResponse); r.ErrorCode != invalid {
		t.Errorf("OffsetDelete: code %d", r.ErrorCode)
	}
}
