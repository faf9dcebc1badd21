package membership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
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
	n, err := tryStartNode(t, cfg, stream, topic, self, nodes, "s1", slog.DiscardHandler)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tryStartNode starts a node with the settings fingerprint settings, logging to logs.
func tryStartNode(t *testing.T, cfg iggy.Config, stream, topic string, self int32, nodes []int32, settings string, logs slog.Handler) (*node, error) {
	t.Helper()
	n := &node{conn: conn(t, cfg), changes: make(chan []int32, 64)}
	m, err := Start(t.Context(), Config{
		API: n.conn, Stream: stream, Topic: topic, Self: self, Nodes: nodes, Settings: settings, Interval: 50 * time.Millisecond,
		OnChange: func(live []int32) { n.changes <- live }, Logger: slog.New(logs),
	})
	if err != nil {
		return nil, err
	}
	n.m = m
	t.Cleanup(m.Close)
	return n, nil
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

// TestSettingsMismatch: a gateway whose shared settings differ from those of a live gateway
// refuses to start; one that started at the same time as such a gateway (so that neither saw
// the other at its start) logs an error naming it, and takes it for live. A gateway with
// other settings that is gone (its group has no member) is no obstacle.
func TestSettingsMismatch(t *testing.T) {
	cfg, stream, topic := backend(t)
	nodes := []int32{1, 2, 3}
	logs := &errorLog{}
	n1, err := tryStartNode(t, cfg, stream, topic, 1, nodes, "s1", logs)
	if err != nil {
		t.Fatal(err)
	}
	n1.await(t, 1)
	if _, err := tryStartNode(t, cfg, stream, topic, 2, nodes, "s2", slog.DiscardHandler); !errors.Is(err, ErrSettingsMismatch) || !strings.Contains(err.Error(), "[1]") {
		t.Fatalf("start with other settings beside a live gateway: %v, want ErrSettingsMismatch naming node 1", err)
	}

	// Node 3 with other settings, as if it had started at the same moment as node 1.
	other := conn(t, cfg)
	if _, err := other.CreateConsumerGroup(t.Context(), iggy.Name(stream), iggy.Name(topic), GroupName(3, "s3")); err != nil {
		t.Fatal(err)
	}
	if err := other.JoinConsumerGroup(t.Context(), iggy.Name(stream), iggy.Name(topic), iggy.Name(GroupName(3, "s3"))); err != nil {
		t.Fatal(err)
	}
	n1.await(t, 1, 3)
	if got := logs.messages(); len(got) != 1 || !strings.Contains(got[0], "nodes=[3]") {
		t.Errorf("errors logged: %q, want one naming node 3", got)
	}

	other.Close() // node 3 is gone: its settings no longer matter
	n1.await(t, 1)
	n2, err := tryStartNode(t, cfg, stream, topic, 2, nodes, "s1", slog.DiscardHandler)
	if err != nil {
		t.Fatalf("start with the same settings: %v", err)
	}
	n2.await(t, 1, 2)
}

func TestNodeOf(t *testing.T) {
	for _, tt := range []struct {
		group    string
		id       int32
		settings string
		ok       bool
	}{
		{GroupName(7, "0123abcd"), 7, "0123abcd", true},
		{"kafka-gateway-node-7", 0, "", false}, // no settings: not a node group of this version
		{"kafka-gateway-node-07-ab", 0, "", false},
		{"kafka-gateway-node-x-ab", 0, "", false},
		{"other-group", 0, "", false},
	} {
		id, settings, ok := nodeOf(tt.group)
		if ok != tt.ok || ok && (id != tt.id || settings != tt.settings) {
			t.Errorf("nodeOf(%q) = %d, %q, %v; want %d, %q, %v", tt.group, id, settings, ok, tt.id, tt.settings, tt.ok)
		}
	}
}

// errorLog keeps the messages logged at ERROR, with their attributes.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *errorLog) Enabled(_ context.Context, level slog.Level) bool { return level >= slog.LevelError }
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler               { return l }
func (l *errorLog) WithGroup(string) slog.Handler                    { return l }

func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool { msg += " " + a.String(); return true })
	l.mu.Lock()
	l.msgs = append(l.msgs, msg)
	l.mu.Unlock()
	return nil
}

func (l *errorLog) messages() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.msgs)
}
