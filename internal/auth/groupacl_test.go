package auth_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// direct sends req to the gateway itself, not to the coordinator franz-go would look up first
// (FindCoordinator, itself refused to a stranger), so each group request reaches its own rule.
func direct(ctx context.Context, t *testing.T, cl *kgo.Client, req kmsg.Request) kmsg.Response {
	t.Helper()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// groupMember joins group as a consumer of topic, without committing anything (so nothing in
// the group names a topic), and returns once it is a member: its member id and generation.
func groupMember(ctx context.Context, t *testing.T, g *secureGateway, user, group, topic string) (string, int32) {
	t.Helper()
	cl := g.kafka("SASL_PLAINTEXT", plainAuth(user, user+"-secret"), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err := produce(ctx, cl, topic); err != nil {
		t.Fatal(err)
	}
	if fs := cl.PollFetches(ctx); fs.Err0() != nil || fs.NumRecords() == 0 {
		t.Fatalf("%s consumes in %s: %v", user, group, fs.Err0())
	}
	member, generation := cl.GroupMetadata()
	if member == "" || generation < 0 {
		t.Fatalf("%s is no member of %s: %q %d", user, group, member, generation)
	}
	return member, generation
}

// TestGroupHijackRefused: a tenant can neither join, take part in, kick members of, describe
// nor find another tenant's live group, even one without committed offsets (the rule of
// earlier versions let any tenant that polls somewhere do all of it), and the owner's member
// stays in its group.
func TestGroupHijackRefused(t *testing.T) {
	g, carol, dave := startTenants(t)
	ctx := ctxT(t)
	const group = "carol.live"
	member, generation := groupMember(ctx, t, g, carol.name, group, carol.topic)
	code := kerr.GroupAuthorizationFailed.Code

	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = group, "consumer", 10000, 10000
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "cooperative-sticky", (&kmsg.ConsumerMemberMetadata{Topics: []string{dave.topic}}).AppendTo(nil)
	join.Protocols = append(join.Protocols, p)
	if r := direct(ctx, t, dave.cl, join).(*kmsg.JoinGroupResponse); r.ErrorCode != code {
		t.Errorf("dave joins %s: error %d, want 30", group, r.ErrorCode)
	}
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group = group
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = member
	leave.Members = append(leave.Members, lm)
	if r := direct(ctx, t, dave.cl, leave).(*kmsg.LeaveGroupResponse); r.ErrorCode != code {
		t.Errorf("dave removes carol's member from %s: error %d, want 30", group, r.ErrorCode)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = group, member, generation
	if r := direct(ctx, t, dave.cl, hb).(*kmsg.HeartbeatResponse); r.ErrorCode != code {
		t.Errorf("dave heartbeats as carol's member: error %d, want 30", r.ErrorCode)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = group, member, generation
	if r := direct(ctx, t, dave.cl, sync).(*kmsg.SyncGroupResponse); r.ErrorCode != code {
		t.Errorf("dave syncs as carol's member: error %d, want 30", r.ErrorCode)
	}
	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Groups = []string{group}
	if r := direct(ctx, t, dave.cl, describe).(*kmsg.DescribeGroupsResponse); len(r.Groups) != 1 || r.Groups[0].ErrorCode != code || len(r.Groups[0].Members) != 0 {
		t.Errorf("dave describes %s: %+v, want 30 and no members", group, r.Groups)
	}
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.CoordinatorKeys = []string{group}
	if r := direct(ctx, t, dave.cl, find).(*kmsg.FindCoordinatorResponse); len(r.Coordinators) != 1 || r.Coordinators[0].ErrorCode != code {
		t.Errorf("dave finds %s's coordinator: %+v, want 30", group, r.Coordinators)
	}
	if listed, err := dave.adm.ListGroups(ctx); err != nil || slices.Contains(listed.Groups(), group) {
		t.Errorf("dave lists %v (%v): carol's group shows", listed.Groups(), err)
	}

	// carol's member is still the group's only member, in the same generation.
	dg, err := carol.adm.DescribeGroups(ctx, group)
	if err != nil || dg[group].Err != nil {
		t.Fatalf("carol describes her group: %v %v", err, dg[group].Err)
	}
	if d := dg[group]; d.State != "Stable" || len(d.Members) != 1 || d.Members[0].MemberID != member {
		t.Errorf("carol's group after dave's attempts: %+v, want her member %s alone", d, member)
	}
	if listed, err := carol.adm.ListGroups(ctx); err != nil || !slices.Contains(listed.Groups(), group) {
		t.Errorf("carol lists %v (%v): her group is missing", listed.Groups(), err)
	}
}

// TestGroupSquattingRefused: a tenant cannot take another tenant's group name first by
// committing its own topic there (before, that locked the owner out for good: offsets never
// expire), nor claim a name nobody owns; the owner then uses the name freely.
func TestGroupSquattingRefused(t *testing.T) {
	_, carol, dave := startTenants(t)
	ctx := ctxT(t)
	if err := produce(ctx, dave.cl, dave.topic); err != nil {
		t.Fatal(err)
	}
	for _, group := range []string{"carol.fresh", "unowned"} {
		resp, err := commit(ctx, dave.adm, group, dave.topic)
		if !refusedWith(kerr.GroupAuthorizationFailed, err, resp.Error()) {
			t.Fatalf("dave commits his topic to %s: %v %v, want 30", group, err, resp.Error())
		}
	}
	if resp, err := commit(ctx, carol.adm, "carol.fresh", carol.topic); err != nil || resp.Error() != nil {
		t.Fatalf("carol commits to her group: %v %v", err, resp.Error())
	}
	fetched, err := carol.adm.FetchOffsets(ctx, "carol.fresh")
	if err != nil || len(fetched) != 1 {
		t.Fatalf("carol's group holds %+v (%v): want her topic only", fetched, err)
	}
	if dr, err := carol.adm.DeleteGroups(ctx, "carol.fresh"); err != nil || dr.Error() != nil {
		t.Fatalf("carol deletes her group: %+v %v", dr, err)
	}
}

// TestGroupACLFile: the operator's bindings (literal, prefixed, for every user) add to the
// default, DescribeAcls shows them, a describe-only binding lets a user see but not use a
// group, read_servers lists every group, and the root user may do everything.
func TestGroupACLFile(t *testing.T) {
	acl := filepath.Join(t.TempDir(), "groups.toml")
	err := os.WriteFile(acl, []byte(`
[[group_acl]]
principal = "carol"
group = "payments"
operations = ["read"]

[[group_acl]]
principal = "dave"
group = "team-"
pattern = "prefixed"
operations = ["read", "delete"]

[[group_acl]]
principal = "*"
group = "shared"
operations = ["read"]

[[group_acl]]
principal = "carol"
group = "dave."
pattern = "prefixed"
operations = ["describe"]
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	g, carol, dave := startTenants(t, "IGGY_KAFKA_GROUP_ACL_PATH="+acl)
	ctx := ctxT(t)
	for _, me := range []*tenant{carol, dave} {
		if err := produce(ctx, me.cl, me.topic); err != nil {
			t.Fatal(err)
		}
	}
	allowed := []struct {
		who   *tenant
		group string
	}{{carol, "payments"}, {dave, "team-eu"}, {carol, "shared"}, {dave, "shared"}, {dave, "dave.app"}, {carol, "carol.app"}}
	for _, a := range allowed {
		if resp, err := commit(ctx, a.who.adm, a.group, a.who.topic); err != nil || resp.Error() != nil {
			t.Errorf("%s commits to %s: %v %v", a.who.name, a.group, err, resp.Error())
		}
	}
	refusedCommits := []struct {
		who   *tenant
		group string
	}{{dave, "payments"}, {carol, "payments-2"}, {carol, "team-eu"}, {carol, "dave.app"}}
	for _, r := range refusedCommits {
		if resp, err := commit(ctx, r.who.adm, r.group, r.who.topic); !refusedWith(kerr.GroupAuthorizationFailed, err, resp.Error()) {
			t.Errorf("%s commits to %s: %v %v, want 30", r.who.name, r.group, err, resp.Error())
		}
	}

	// carol may describe dave's groups (and fetch their offsets of topics she may poll: none
	// here), not delete them; READ on shared is no DELETE.
	if dg, err := carol.adm.DescribeGroups(ctx, "dave.app"); err != nil || dg["dave.app"].Err != nil {
		t.Errorf("carol describes dave.app: %v %v", err, dg["dave.app"].Err)
	}
	if fo, err := carol.adm.FetchOffsets(ctx, "dave.app"); err != nil || len(fo) != 0 {
		t.Errorf("carol fetches dave.app's offsets: %+v %v, want none of dave's topic", fo, err)
	}
	for _, group := range []string{"dave.app", "shared"} {
		if dr, err := carol.adm.DeleteGroups(ctx, group); !refusedWith(kerr.GroupAuthorizationFailed, err, dr[group].Err) {
			t.Errorf("carol deletes %s: %+v %v, want 30", group, dr, err)
		}
	}
	listed, err := carol.adm.ListGroups(ctx)
	if got := listed.Groups(); err != nil || !slices.Equal(got, []string{"carol.app", "dave.app", "payments", "shared"}) {
		t.Errorf("carol lists %v (%v)", got, err)
	}
	if dr, err := dave.adm.DeleteGroups(ctx, "team-eu"); err != nil || dr.Error() != nil {
		t.Errorf("dave deletes team-eu: %+v %v", dr, err)
	}

	// DescribeAcls: carol's own prefix, her bindings and the one for every user.
	got, _ := describeACLs(ctx, t, carol.cl, func(r *kmsg.DescribeACLsRequest) { r.ResourceType = kmsg.ACLResourceTypeGroup })
	want := slices.Concat(
		bindings("GROUP carol. PREFIXED", "User:carol", "READ", "DELETE", "DESCRIBE"),
		bindings("GROUP dave. PREFIXED", "User:carol", "DESCRIBE"),
		bindings("GROUP payments LITERAL", "User:carol", "READ"),
		bindings("GROUP shared LITERAL", "User:*", "READ"),
	)
	if !slices.Equal(got, want) {
		t.Errorf("carol's group ACLs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got, _ = describeACLs(ctx, t, carol.cl, func(r *kmsg.DescribeACLsRequest) { r.Principal = kmsg.StringPtr("User:*") })
	if want := bindings("GROUP shared LITERAL", "User:*", "READ"); !slices.Equal(got, want) {
		t.Errorf("carol's ACLs for User:*: %v, want %v", got, want)
	}

	// read_servers (Kafka's DESCRIBE on the cluster) lists every group and describes none.
	if _, err := g.iggy.CreateUser(ctx, "watcher", "watcher-secret", wire.UserActive, &wire.Permissions{Global: wire.GlobalPermissions{ReadServers: true}}); err != nil {
		t.Fatal(err)
	}
	watcher := kadm.NewClient(g.kafka("SASL_PLAINTEXT", plainAuth("watcher", "watcher-secret")))
	if listed, err := watcher.ListGroups(ctx); err != nil || !slices.Equal(listed.Groups(), []string{"carol.app", "dave.app", "payments", "shared"}) {
		t.Errorf("watcher lists %v (%v)", listed.Groups(), err)
	}
	if dg, err := watcher.DescribeGroups(ctx, "payments"); !refusedWith(kerr.GroupAuthorizationFailed, err, dg["payments"].Err) {
		t.Errorf("watcher describes payments: %+v %v, want 30", dg, err)
	}

	// The root user (manage_servers) describes, reads and deletes any group.
	root := kadm.NewClient(g.kafka("SASL_PLAINTEXT", plainAuth("iggy", "iggy")))
	if dg, err := root.DescribeGroups(ctx, "carol.app"); err != nil || dg["carol.app"].Err != nil {
		t.Errorf("root describes carol.app: %v %v", err, dg["carol.app"].Err)
	}
	if fo, err := root.FetchOffsets(ctx, "carol.app"); err != nil || len(fo) != 1 {
		t.Errorf("root fetches carol.app's offsets: %+v %v", fo, err)
	}
	if dr, err := root.DeleteGroups(ctx, "carol.app", "payments"); err != nil || dr.Error() != nil {
		t.Errorf("root deletes tenants' groups: %+v %v", dr, err)
	}
}

// TestGroupACLDefaults: GROUP_ACL_DEFAULT=none leaves only the file's bindings (a user's own
// prefix included), and topics restores the rule of earlier versions, squatting included, for
// deployments that choose it.
func TestGroupACLDefaults(t *testing.T) {
	t.Run("none", func(t *testing.T) {
		_, carol, _ := startTenants(t, "IGGY_KAFKA_GROUP_ACL_DEFAULT=none")
		ctx := ctxT(t)
		if err := produce(ctx, carol.cl, carol.topic); err != nil {
			t.Fatal(err)
		}
		if resp, err := commit(ctx, carol.adm, "carol.app", carol.topic); !refusedWith(kerr.GroupAuthorizationFailed, err, resp.Error()) {
			t.Errorf("carol commits to carol.app without a binding: %v %v, want 30", err, resp.Error())
		}
		if got, _ := describeACLs(ctx, t, carol.cl, func(r *kmsg.DescribeACLsRequest) { r.ResourceType = kmsg.ACLResourceTypeGroup }); len(got) != 0 {
			t.Errorf("carol's group ACLs: %v, want none", got)
		}
	})
	t.Run("topics", func(t *testing.T) {
		_, carol, dave := startTenants(t, "IGGY_KAFKA_GROUP_ACL_DEFAULT=topics")
		ctx := ctxT(t)
		for _, me := range []*tenant{carol, dave} {
			if err := produce(ctx, me.cl, me.topic); err != nil {
				t.Fatal(err)
			}
		}
		if resp, err := commit(ctx, dave.adm, "anything", dave.topic); err != nil || resp.Error() != nil {
			t.Fatalf("dave commits to a new group: %v %v", err, resp.Error())
		}
		if resp, err := commit(ctx, carol.adm, "anything", carol.topic); !refusedWith(kerr.GroupAuthorizationFailed, err, resp.Error()) {
			t.Errorf("carol commits to a group holding dave's offsets: %v %v, want 30 (the old rule)", err, resp.Error())
		}
	})
}
