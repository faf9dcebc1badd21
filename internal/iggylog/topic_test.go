package iggylog

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// The log these tests create (the coordinator log's shape).
const (
	logTopic      = "log"
	logPartitions = 16
)

// iggyBackend returns the address and credentials of an Iggy server: a real one when
// IGGY_TEST_ADDR is set (IGGY_TEST_USERNAME / IGGY_TEST_PASSWORD), else the in-memory server.
func iggyBackend(t *testing.T) iggy.Config {
	t.Helper()
	if addr := os.Getenv("IGGY_TEST_ADDR"); addr != "" {
		t.Logf("iggy backend: real at %s", addr)
		return iggy.Config{Addr: addr, Username: envOr("IGGY_TEST_USERNAME", "iggy"), Password: envOr("IGGY_TEST_PASSWORD", "iggy"), PoolSize: 2, PingInterval: -1}
	}
	srv, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
	if err != nil {
		t.Fatalf("start memserver: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	t.Logf("iggy backend: memserver at %s", srv.Addr())
	return iggy.Config{Addr: srv.Addr(), Username: "iggy", Password: "iggy", PoolSize: 2, PingInterval: -1}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func dial(t *testing.T, cfg iggy.Config) *iggy.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := iggy.Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// uniqueStream keeps tests apart on a shared real server.
func uniqueStream(t *testing.T) string {
	return fmt.Sprintf("%s-%s-%d", ReservedStream, strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

// TestTopicEnsure: Ensure creates the topic once with the options asked for, reports the flush
// options of a topic it finds, and refuses a topic with another partition count.
func TestTopicEnsure(t *testing.T) {
	cfg := iggyBackend(t)
	client := dial(t, cfg)
	ctx := t.Context()
	stream := uniqueStream(t)
	log := NewTopic(client, stream, logTopic, logPartitions)
	for range 2 { // creates, then finds
		if err := log.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
	}
	topic, err := client.GetTopic(ctx, iggy.Name(stream), iggy.Name(logTopic))
	if err != nil {
		t.Fatal(err)
	}
	if topic.PartitionsCount != logPartitions || topic.MessageExpiry != iggy.Never {
		t.Fatalf("topic %+v", topic)
	}
	// Each acknowledged commit is written before Iggy answers (durability.Write by default).
	if m, ok := log.FlushInForce().Mode(); !ok || m != durability.Write {
		t.Fatalf("log flush %s, want write", log.FlushInForce())
	}
	// A log topic created with Iggy's defaults (an older gateway) is reported as such.
	old := NewTopic(client, stream, "old-defaults", logPartitions)
	old.Flush = durability.IggyDefault
	if err := old.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if again := NewTopic(client, stream, "old-defaults", logPartitions); again.Ensure(ctx) != nil || again.FlushInForce().WritesEachAck() {
		t.Fatalf("old-defaults topic reported as %s", again.FlushInForce())
	}
	// A topic someone else created with another partition count is refused.
	other := NewTopic(client, stream, "other", logPartitions)
	if _, err := client.CreateTopic(ctx, iggy.Name(stream), "other", 3, iggy.TopicOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := other.Ensure(ctx); err == nil || !strings.Contains(err.Error(), "has 3 partitions") {
		t.Fatalf("Ensure error %v", err)
	}
	// Reads past the end return nothing.
	if entries, err := log.ReadFrom(ctx, 0, 0, 10); err != nil || len(entries) != 0 {
		t.Fatalf("ReadFrom empty partition: %v %v", entries, err)
	}
}
