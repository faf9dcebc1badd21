package groups

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeGroups(t *testing.T) {
	stored := &fakeStored{groups: map[string]storedGroup{"offsets-only": {protocolType: "consumer", generation: 7}}}
	h := newHarness(t, func(c *Config) { c.Stored = stored })
	j, _ := h.joinNew("a")
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 6
	req.Groups = []string{testGroup, "offsets-only", "unknown", strings.Repeat("x", 300)}
	resp := h.c.DescribeGroups(req)
	got := make([]string, len(resp.Groups))
	for i, g := range resp.Groups {
		got[i] = fmt.Sprintf("%s/%s/%s/%d/%d", g.Group[:min(len(g.Group), 12)], g.State, g.ProtocolType, len(g.Members), g.ErrorCode)
	}
	want := []string{
		"g/PreparingRebalance/consumer/1/0",
		"offsets-only/Empty/consumer/0/0",
		fmt.Sprintf("unknown/Dead//0/%d", kerr.GroupIDNotFound.Code),
		fmt.Sprintf("xxxxxxxxxxxx///0/%d", kerr.InvalidGroupID.Code),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("describe\n got %v\nwant %v", got, want)
	}
	if resp.Groups[0].Protocol != "" || resp.Groups[0].Members[0].ProtocolMetadata != nil {
		t.Fatal("protocol details reported for a group that is not stable")
	}
	// Before v6 an unknown group is Dead without an error.
	req.Version = 5
	if g := h.c.DescribeGroups(req).Groups[2]; g.State != "Dead" || g.ErrorCode != 0 {
		t.Fatalf("v5 unknown group %+v", g)
	}
	h.clock.Advance(3 * time.Second)
	j.ok()
}

func TestStoredGroupSeedsGeneration(t *testing.T) {
	stored := &fakeStored{groups: map[string]storedGroup{testGroup: {protocolType: "consumer", generation: 41}}}
	h := newHarness(t, func(c *Config) { c.Stored = stored })
	ids, gen := h.stableGroup("a")
	if gen != 42 {
		t.Fatalf("generation %d, want 42", gen)
	}
	_ = ids
}

func TestListGroups(t *testing.T) {
	stored := &fakeStored{groups: map[string]storedGroup{
		"stored":  {protocolType: "consumer"},
		testGroup: {protocolType: "consumer"}, // also in memory: listed once
	}}
	h := newHarness(t, func(c *Config) { c.Stored = stored })
	h.stableGroup("a")
	pj := h.startJoin("b", withGroup("joining"), withType("connect"))
	pj.fails(kerr.MemberIDRequired) // pending only: Empty, no protocol type yet (as Kafka)
	list := func(version int16, states, types []string) string {
		req := kmsg.NewPtrListGroupsRequest()
		req.Version = version
		req.StatesFilter = states
		req.TypesFilter = types
		resp := h.c.ListGroups(req)
		var out []string
		for _, g := range resp.Groups {
			out = append(out, g.Group+"/"+g.GroupState+"/"+g.ProtocolType+"/"+g.GroupType)
		}
		return strings.Join(out, " ")
	}
	tests := []struct {
		states, types []string
		want          string
	}{
		{nil, nil, "g/Stable/consumer/classic joining/Empty//classic stored/Empty/consumer/classic"},
		{[]string{"stable"}, nil, "g/Stable/consumer/classic"},
		{[]string{"Empty", "Dead"}, nil, "joining/Empty//classic stored/Empty/consumer/classic"},
		{nil, []string{"Classic"}, "g/Stable/consumer/classic joining/Empty//classic stored/Empty/consumer/classic"},
		{nil, []string{"consumer"}, ""},
	}
	for _, tt := range tests {
		if got := list(5, tt.states, tt.types); got != tt.want {
			t.Errorf("states %v types %v:\n got %q\nwant %q", tt.states, tt.types, got, tt.want)
		}
	}
}

func TestDeleteGroups(t *testing.T) {
	stored := &fakeStored{groups: map[string]storedGroup{"stored": {}, testGroup: {}}}
	h := newHarness(t, func(c *Config) { c.Stored = stored })
	h.stableGroup("a")
	h.startJoin("b", withGroup("pending-only")).fails(kerr.MemberIDRequired)
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Groups = []string{testGroup, "stored", "pending-only", "unknown", ""}
	resp := h.c.DeleteGroups(t.Context(), req)
	want := []int16{kerr.NonEmptyGroup.Code, 0, 0, kerr.GroupIDNotFound.Code, kerr.GroupIDNotFound.Code}
	for i, g := range resp.Groups {
		if g.Group != req.Groups[i] || g.ErrorCode != want[i] {
			t.Errorf("group %q: code %d, want %d", g.Group, g.ErrorCode, want[i])
		}
	}
	if _, _, ok := stored.LookupGroup("stored"); ok {
		t.Fatal("stored state not deleted")
	}
	if _, _, ok := stored.LookupGroup(testGroup); !ok {
		t.Fatal("stored state of a non-empty group deleted")
	}
	h.mustState("Stable")

	stored.err = fmt.Errorf("append failed: %w", kerr.CoordinatorLoadInProgress)
	req.Groups = []string{"x"}
	if code := h.c.DeleteGroups(t.Context(), req).Groups[0].ErrorCode; code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("store failure: %v", kerr.ErrorForCode(code))
	}
	stored.err = errors.New("opaque")
	if code := h.c.DeleteGroups(t.Context(), req).Groups[0].ErrorCode; code != kerr.UnknownServerError.Code {
		t.Fatalf("opaque store failure: %v", kerr.ErrorForCode(code))
	}
}

func TestValidateOffsetCommit(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("a", "b")
	a := ids[0]
	inst := kmsg.StringPtr("i")
	tests := []struct {
		name       string
		group      string
		member     string
		instance   *string
		generation int32
		want       *kerr.Error
	}{
		{"member of the current generation", testGroup, a, nil, gen, nil},
		{"stale generation", testGroup, a, nil, gen - 1, kerr.IllegalGeneration},
		{"unknown member", testGroup, "nobody", nil, gen, kerr.UnknownMemberID},
		{"unknown instance", testGroup, a, inst, gen, kerr.UnknownMemberID},
		{"simple commit to an active group", testGroup, "", nil, -1, kerr.UnknownMemberID},
		{"simple commit to an unknown group", "free", "", nil, -1, nil},
		{"generation for an unknown group", "free", "m", nil, 3, kerr.IllegalGeneration},
		{"member without generation for an unknown group", "free", "m", nil, -1, kerr.UnknownMemberID},
		{"empty group id", "", "", nil, -1, nil},
		{"group id too long", strings.Repeat("x", 256), "", nil, -1, kerr.InvalidGroupID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := h.c.ValidateOffsetCommit(tt.group, tt.member, tt.instance, tt.generation); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	// During CompletingRebalance members are told the rebalance is still in progress.
	jc, _ := h.joinNew("c")
	ja := h.startJoin("a", withMember(a))
	jb := h.startJoin("b", withMember(ids[1]))
	ja.ok()
	jb.ok()
	jc.ok()
	if got := h.c.ValidateOffsetCommit(testGroup, a, nil, gen+1); got != kerr.RebalanceInProgress {
		t.Fatalf("commit in CompletingRebalance: %v", got)
	}
}

func TestCommitCountsAsHeartbeat(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("a")
	for range 3 {
		h.clock.Advance(testSession - 1)
		if err := h.c.ValidateOffsetCommit(testGroup, ids[0], nil, gen); err != nil {
			t.Fatal(err)
		}
	}
	h.mustHeartbeat(ids[0], gen, nil)
}

func TestOffsetDeleteGuard(t *testing.T) {
	h := newHarness(t)
	if _, active, err := h.c.OffsetDeleteGuard("unknown"); active || err != nil {
		t.Fatalf("unknown group: active %v err %v", active, err)
	}
	// Opaque (non-consumer) metadata in an active group: nothing may be deleted.
	jc, _ := h.joinNew("c", withGroup("connect"), withType("connect"))
	if _, active, err := h.c.OffsetDeleteGuard("connect"); !active || err != kerr.NonEmptyGroup {
		t.Fatalf("connect group: active %v err %v", active, err)
	}
	// A consumer group whose metadata cannot be decoded protects every topic.
	h.stableGroup("a")
	subscribed, active, err := h.c.OffsetDeleteGuard(testGroup)
	if !active || err != nil || !subscribed("anything") {
		t.Fatalf("undecodable subscription: active %v err %v", active, err)
	}
	h.clock.Advance(3 * time.Second)
	jc.ok()
}
