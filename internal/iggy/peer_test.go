package iggy

import (
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// A send on a pooled connection that the server closed while it was idle goes out on a fresh
// session instead of being written into the dead socket and reported as "may have landed".
func TestSendAfterServerDroppedIdleConnection(t *testing.T) {
	srv, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := testCtx(t)
	c, err := Dial(ctx, Config{Addr: srv.Addr(), Username: "iggy", Password: "iggy", PoolSize: 1, PingInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := newStream(t, c)
	tp, err := c.CreateTopic(ctx, ID(s.ID), "dropped", 1, TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		srv.DropConnections()
		awaitPeerClosed(t, c.conns...)
		conf, err := c.SendMessages(ctx, ID(s.ID), ID(tp.ID), 0, []Message{{Payload: []byte{byte('a' + i)}}})
		if err != nil {
			t.Fatalf("send %d after the server dropped the connection: %v", i, err)
		}
		if conf.BaseOffset != uint64(i) {
			t.Fatalf("send %d stored at offset %d", i, conf.BaseOffset)
		}
	}
}

// awaitPeerClosed waits until each of conns sees that the server closed its socket (or has
// dropped it already), failing t after 10 s.
func awaitPeerClosed(t *testing.T, conns ...*Conn) {
	t.Helper()
	closed := func(cn *Conn) bool {
		if err := cn.lock(testCtx(t)); err != nil {
			return false
		}
		defer cn.unlock()
		return cn.nc == nil || peerClosed(cn.nc)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, cn := range conns {
		for !closed(cn) {
			if time.Now().After(deadline) {
				t.Fatal("the server's close did not reach the client within 10 s")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
