package authz

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

func startIggy(t *testing.T) (*iggy.Client, context.Context) {
	t.Helper()
	ms, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	cl, err := iggy.Dial(ctx, iggy.Config{Addr: ms.Addr(), Username: "iggy", Password: "iggy", PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl, ctx
}

func onTopicID(stream, topic uint32) *iggy.Permissions {
	return &iggy.Permissions{Streams: []iggy.StreamPermissions{{StreamID: stream, Topics: []iggy.TopicPermissions{
		{TopicID: topic, ManageTopic: true, SendMessages: true, PollMessages: true},
	}}}}
}

// A per-topic permission stays with the topic it was first seen naming: when the topic is
// deleted and Iggy gives its id to the next topic of the stream, the permission grants nothing
// there, until it is withdrawn and granted again. A rename keeps the topic (and the grant).
func TestPerTopicGrantDoesNotFollowAReusedID(t *testing.T) {
	cl, ctx := startIggy(t)
	st, err := cl.CreateStream(ctx, "tenants")
	if err != nil {
		t.Fatal(err)
	}
	own, err := cl.CreateTopic(ctx, iggy.ID(st.ID), "alice-orders", 1, iggy.TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateUser(ctx, "alice", "alice-secret", iggy.UserActive, onTopicID(st.ID, own.ID)); err != nil {
		t.Fatal(err)
	}
	c := NewCache(cl, time.Second)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	grants := func() *Grants {
		t.Helper()
		now = now.Add(2 * time.Second) // past the refresh interval: read again
		g, err := c.Grants(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	if g := grants(); !g.Send("tenants", "alice-orders") || !g.ManageTopic("tenants", "alice-orders") {
		t.Fatalf("alice's own topic: %+v", g)
	}
	if err := cl.UpdateTopic(ctx, iggy.ID(st.ID), iggy.ID(own.ID), "alice-orders-v2", iggy.TopicOptions{}); err != nil {
		t.Fatal(err)
	}
	if g := grants(); !g.Send("tenants", "alice-orders-v2") {
		t.Fatalf("renamed topic lost its grant: %+v", g)
	}
	// Alice deletes her topic (Iggy keeps her permission); the operator creates the next one.
	if err := cl.DeleteTopic(ctx, iggy.ID(st.ID), iggy.ID(own.ID)); err != nil {
		t.Fatal(err)
	}
	grants()
	other, err := cl.CreateTopic(ctx, iggy.ID(st.ID), "bob-payments", 1, iggy.TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if other.ID != own.ID {
		t.Skipf("the server gave the new topic id %d, not the freed %d: nothing to check", other.ID, own.ID)
	}
	if g := grants(); g.Describe("tenants", "bob-payments") {
		t.Fatalf("alice's permission on her deleted topic grants access to the topic that got its id: %+v", g)
	}
	// Withdrawn and granted again: the operator means this topic now.
	if err := cl.UpdatePermissions(ctx, iggy.Name("alice"), nil); err != nil {
		t.Fatal(err)
	}
	grants()
	if err := cl.UpdatePermissions(ctx, iggy.Name("alice"), onTopicID(st.ID, other.ID)); err != nil {
		t.Fatal(err)
	}
	if g := grants(); !g.Send("tenants", "bob-payments") {
		t.Fatalf("a permission granted anew on the topic was not honoured: %+v", g)
	}
}

// Revoke withdraws the per-topic permissions on a deleted topic from every user, and nothing
// else.
func TestRevokeDeletedTopic(t *testing.T) {
	cl, ctx := startIggy(t)
	s1, err := cl.CreateStream(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := cl.CreateStream(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	gone, err := cl.CreateTopic(ctx, iggy.ID(s1.ID), "gone", 1, iggy.TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := cl.CreateTopic(ctx, iggy.ID(s1.ID), "kept", 1, iggy.TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	twin, err := cl.CreateTopic(ctx, iggy.ID(s2.ID), "twin", 1, iggy.TopicOptions{}) // may share gone's id
	if err != nil {
		t.Fatal(err)
	}
	alice := &iggy.Permissions{Global: iggy.GlobalPermissions{ReadServers: true}, Streams: []iggy.StreamPermissions{{
		StreamID: s1.ID, PollMessages: true,
		Topics: []iggy.TopicPermissions{{TopicID: gone.ID, SendMessages: true}, {TopicID: kept.ID, ManageTopic: true}},
	}}}
	bob := &iggy.Permissions{Streams: []iggy.StreamPermissions{{StreamID: s2.ID, Topics: []iggy.TopicPermissions{{TopicID: twin.ID, SendMessages: true}}}}}
	for name, p := range map[string]*iggy.Permissions{"alice": alice, "bob": bob, "carol": nil} {
		if _, err := cl.CreateUser(ctx, name, name+"-secret", iggy.UserActive, p); err != nil {
			t.Fatal(err)
		}
	}
	d := BeforeDelete(ctx, cl, "s1", "gone")
	if err := cl.DeleteTopic(ctx, iggy.ID(s1.ID), iggy.ID(gone.ID)); err != nil {
		t.Fatal(err)
	}
	changed, err := d.Revoke(ctx)
	if err != nil || !slices.Equal(changed, []string{"alice"}) {
		t.Fatalf("revoke: changed %v, %v; want [alice]", changed, err)
	}
	u, err := cl.GetUser(ctx, iggy.Name("alice"))
	if err != nil {
		t.Fatal(err)
	}
	want := &iggy.Permissions{Global: iggy.GlobalPermissions{ReadServers: true}, Streams: []iggy.StreamPermissions{{
		StreamID: s1.ID, PollMessages: true, Topics: []iggy.TopicPermissions{{TopicID: kept.ID, ManageTopic: true}},
	}}}
	if !permissionsEqual(u.Permissions, want) {
		t.Errorf("alice's permissions %+v, want %+v", u.Permissions, want)
	}
	if u, err := cl.GetUser(ctx, iggy.Name("bob")); err != nil || !permissionsEqual(u.Permissions, bob) {
		t.Errorf("bob's permissions changed: %+v, %v", u, err)
	}
	if _, err := BeforeDelete(ctx, cl, "s1", "missing").Revoke(ctx); err == nil {
		t.Error("revoking for a topic whose ids were not found reported success")
	}
}

func permissionsEqual(a, b *iggy.Permissions) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Global == b.Global && slices.EqualFunc(a.Streams, b.Streams, func(x, y iggy.StreamPermissions) bool {
		xt, yt := x.Topics, y.Topics
		x.Topics, y.Topics = nil, nil
		return x.StreamID == y.StreamID && streamFlagsEqual(x, y) && slices.Equal(xt, yt)
	})
}

func streamFlagsEqual(x, y iggy.StreamPermissions) bool {
	return x.ManageStream == y.ManageStream && x.ReadStream == y.ReadStream && x.ManageTopics == y.ManageTopics &&
		x.ReadTopics == y.ReadTopics && x.PollMessages == y.PollMessages && x.SendMessages == y.SendMessages
}
