package membership

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// backend returns an Iggy server (a real one when IGGY_TEST_ADDR is set) and a fresh
// stream and topic on it.
func backend(t *testing.T) (iggy.Config, string, string) {
	t.Helper()
	cfg := iggy.Config{Addr: os.Getenv("IGGY_TEST_ADDR"), Username: envOr("IGGY_TEST_USERNAME", "iggy"), Password: envOr("IGGY_TEST_PASSWORD", "iggy")}
	if cfg.Addr == "" {
		srv, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		cfg.Addr = srv.Addr()
	}
	stream := fmt.Sprintf("membership-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
	admin := conn(t, cfg)
	if _, err := admin.CreateStream(t.Context(), stream); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.DeleteStream(context.Background(), iggy.Name(stream)) })
	if _, err := admin.CreateTopic(t.Context(), iggy.Name(stream), "log", 16, iggy.TopicOptions{MessageExpiry: iggy.Never, MaxTopicSize: iggy.Never}); err != nil {
		t.Fatal(err)
	}
	return cfg, stream, "log"
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func conn(t *testing.T, cfg iggy.Config) *iggy.Conn {
	t.Helper()
	c, err := iggy.DialConn(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// node is one gateway's membership and what it was told.
type node struct {
	conn    *iggy.Conn
	m       *Membership
	changes chan []int32
}

func startNode(t *testing.T, cfg iggy.Config, stream, topic string, self int32, nodes []int32) *node {
	t.Helper()
	n := &node{conn: conn(t, cfg), changes: make(chan []int32, 64)}
	m, err := Start(t.Context(), Config{
		API: n.conn, Stream: stream, Topic: topic, Self: self, Nodes: nodes, Interval: 50 * time.Millisecond,
		OnChange: func(live []int32) { n.changes <- live }, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	n.m = m
	t.Cleanup(m.Close)
	return n
}

// await waits until n is told exactly want.
func (n *node) await(t *testing.T, want ...int32) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-n.changes:
			if slices.Equal(got, want) {
				return
			}
		case <-deadline:
			t.Fatalf("membership never became %v", want)
		}
	}
}

// TestDeadSessionLeavesTheMembership: when a gateway's Iggy session ends (its connection
// closes, as when the process is killed), the others see it gone within a poll, and see it
// again when it rejoins. This is the Iggy behaviour the takeover relies on: membership
// belongs to the session and ends with it.
func TestDeadSessionLeavesTheMembership(t *testing.T) {
	cfg, stream, topic := backend(t)
	nodes := []int32{1, 2, 3}
	n1 := startNode(t, cfg, stream, topic, 1, nodes)
	n2 := startNode(t, cfg, stream, topic, 2, nodes)
	n3 := startNode(t, cfg, stream, topic, 3, nodes)
	n1.await(t, 1, 2, 3)
	n2.await(t, 1, 2, 3)

	n3.m.Close()
	n3.conn.Close() // the session ends
	n1.await(t, 1, 2)
	n2.await(t, 1, 2)

	startNode(t, cfg, stream, topic, 3, nodes)
	n1.await(t, 1, 2, 3)
}
