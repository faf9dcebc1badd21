package authz

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// countingSource serves fixed permissions and counts the GetUser calls.
type countingSource struct {
	perms *iggy.Permissions
	err   error
	reads int
}

func (s *countingSource) GetUser(_ context.Context, id iggy.Identifier) (*iggy.User, error) {
	s.reads++
	if s.err != nil {
		return nil, s.err
	}
	return &iggy.User{ID: 7, Username: id.Name, Status: iggy.UserActive, Permissions: s.perms}, nil
}

func (s *countingSource) GetStream(context.Context, iggy.Identifier) (*iggy.Stream, error) {
	return nil, &iggy.Error{Code: iggy.CodeStreamIDNotFound}
}

func TestCacheRefresh(t *testing.T) {
	src := &countingSource{perms: &iggy.Permissions{Global: iggy.GlobalPermissions{SendMessages: true}}}
	c := NewCache(src, 10*time.Second)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	ctx := context.Background()
	steps := []struct {
		name      string
		advance   time.Duration
		stale     bool
		revoke    bool
		wantReads int
		wantSend  bool
	}{
		{"first use reads", 0, false, false, 1, true},
		{"within the interval: cached", 9 * time.Second, false, false, 1, true},
		{"revoked in Iggy, still within the interval", 0, false, true, 1, true},
		{"interval passed: read again", 2 * time.Second, false, false, 2, false},
		{"stale right after a read: not yet", 0, true, false, 2, false},
		{"stale, a second later: read again", time.Second, false, false, 3, false},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if s.revoke {
			src.perms = nil
		}
		if s.stale {
			c.Stale("alice")
		}
		g, err := c.Grants(ctx, "alice")
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if src.reads != s.wantReads || g.Send("s", "t") != s.wantSend {
			t.Fatalf("%s: reads %d send %v, want %d %v", s.name, src.reads, g.Send("s", "t"), s.wantReads, s.wantSend)
		}
	}
	now = now.Add(time.Minute)
	src.err = errors.New("iggy down")
	if g, err := c.Grants(ctx, "alice"); err == nil {
		t.Fatalf("expired snapshot used while Iggy is unreachable: %+v", g)
	}
}

// TestLoad reads permissions from an Iggy server and checks that ids become names, that
// grants on deleted topics are dropped and that unknown and inactive users get nothing.
func TestLoad(t *testing.T) {
	ms, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := iggy.Dial(ctx, iggy.Config{Addr: ms.Addr(), Username: "iggy", Password: "iggy", PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	st, err := cl.CreateStream(ctx, "tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	orders, err := cl.CreateTopic(ctx, iggy.ID(st.ID), "orders", 1, iggy.TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := cl.CreateTopic(ctx, iggy.ID(st.ID), "gone", 1, iggy.TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	perms := &iggy.Permissions{
		Global: iggy.GlobalPermissions{ReadServers: true},
		Streams: []iggy.StreamPermissions{{StreamID: st.ID, PollMessages: true, Topics: []iggy.TopicPermissions{
			{TopicID: orders.ID, SendMessages: true}, {TopicID: gone.ID, ManageTopic: true},
		}}},
	}
	if _, err := cl.CreateUser(ctx, "alice", "alice-secret", iggy.UserActive, perms); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateUser(ctx, "idle", "idle-secret", iggy.UserInactive, perms); err != nil {
		t.Fatal(err)
	}
	if err := cl.DeleteTopic(ctx, iggy.ID(st.ID), iggy.ID(gone.ID)); err != nil {
		t.Fatal(err)
	}
	g, err := Load(ctx, cl, "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !g.ReadServers() || !g.Send("tenant-a", "orders") || g.Send("tenant-a", "other") || !g.Poll("tenant-a", "other") || g.ManageTopic("tenant-a", "gone") {
		t.Fatalf("alice's grants: %+v", g)
	}
	for _, user := range []string{"nobody", "idle"} {
		g, err := Load(ctx, cl, user, time.Now())
		if err != nil || g.PollsAnywhere() || g.ReadServers() {
			t.Fatalf("%s: %+v, %v; want no grants", user, g, err)
		}
	}
}
