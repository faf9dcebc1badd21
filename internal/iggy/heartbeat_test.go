package iggy

import (
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// TestHeartbeat needs a server with a short heartbeat interval, so it always uses the
// in-memory server: a group member that pings keeps its membership, one that does not is
// evicted (StaleClient) and its next call logs in again on a new session.
func TestHeartbeat(t *testing.T) {
	srv, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", HeartbeatInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Logf("iggy backend: memserver at %s", srv.Addr())
	ctx := testCtx(t)
	cfg := Config{Addr: srv.Addr(), Username: "iggy", Password: "iggy", PoolSize: 1, PingInterval: -1}
	admin, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	s, err := admin.CreateStream(ctx, "hb")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := admin.CreateTopic(ctx, ID(s.ID), "t", 2, TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := admin.CreateConsumerGroup(ctx, ID(s.ID), ID(tp.ID), "g")
	if err != nil {
		t.Fatal(err)
	}
	sid, tid, gid := ID(s.ID), ID(tp.ID), ID(g.ID)

	pinging := cfg
	pinging.PingInterval = 20 * time.Millisecond
	live, err := DialConn(ctx, pinging)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	silent, err := DialConn(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	for _, cn := range []*Conn{live, silent} {
		if err := cn.JoinConsumerGroup(ctx, sid, tid, gid); err != nil {
			t.Fatal(err)
		}
	}
	silentSession := silent.Session()
	// The server evicts the silent member once its heartbeat window passes; the pinging one
	// must stay.
	for {
		got, err := admin.GetConsumerGroup(ctx, sid, tid, gid)
		if err != nil {
			t.Fatalf("waiting for the silent member's eviction: %v", err)
		}
		if got.MembersCount == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if a, err := live.SyncConsumerGroup(ctx, sid, tid, gid); err != nil || len(a.Partitions) != 2 {
		t.Fatalf("pinging member lost its assignment: %+v, %v", a, err)
	}
	if _, err := silent.GetMe(ctx); err != nil {
		t.Fatalf("call after eviction: %v", err)
	}
	if silent.Session() == silentSession {
		t.Fatal("evicted connection kept its session")
	}
}
