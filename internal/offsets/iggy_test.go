package offsets

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
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
	return fmt.Sprintf("%s-%s-%d", iggylog.ReservedStream, strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

// TestIggyLogSurvivesRestart: the store over a log in Iggy keeps every kind of record across a
// crash and a clean restart.
func TestIggyLogSurvivesRestart(t *testing.T) {
	cfg := iggyBackend(t)
	stream := uniqueStream(t)
	open := func() (*Store, *iggylog.Topic) {
		log := iggylog.NewTopic(dial(t, cfg), stream, DefaultTopic, DefaultPartitions)
		return openStore(t, log, func(c *Config) { c.CheckpointEvery = 5 }), log
	}
	s, log := open()
	ctx := t.Context()
	mustCommit(t, s, "g", commit("t", 0, 0, -1, ""), commit("t", 1, 17, 4, "meta"))
	for i := range 12 { // crosses several checkpoints of one log partition
		mustCommit(t, s, "h", commit("u", int32(i%3), int64(i), 2, fmt.Sprint(i)))
	}
	if err := s.RecordGeneration(ctx, "g", 7, "consumer", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteOffsets(ctx, "h", []TopicPartitions{{Topic: "u", Partitions: []int32{0}}}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s, "gone", commit("t", 0, 1, -1, ""))
	if _, err := s.DeleteGroup(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	before := snapshotAll(s)
	if p := s.parts[PartitionFor("h", DefaultPartitions)]; p.checkpoint == NoCheckpoint {
		t.Fatal("no checkpoint was written to Iggy")
	}
	end, err := log.End(ctx, PartitionFor("h", DefaultPartitions))
	if err != nil || end < 12 {
		t.Fatalf("End = %d, %v", end, err)
	}

	// A crash (no Close): a new client and store over the same server see everything.
	again, _ := open()
	if !reflect.DeepEqual(before, snapshotAll(again)) {
		t.Fatal("state after restart differs")
	}
	if got := fetchOne(t, again, "g", "t", 0); got.Offset != 0 || got.LeaderEpoch != -1 {
		t.Fatalf("offset 0 did not round-trip: %+v", got)
	}
	if got := fetchOne(t, again, "g", "t", 1); got.Offset != 17 || got.LeaderEpoch != 4 || got.Metadata != "meta" {
		t.Fatalf("commit did not round-trip: %+v", got)
	}
	if pt, gen, ok := again.LookupGroup("g"); !ok || gen != 7 || pt != "consumer" {
		t.Fatalf("generation: %q %d %v", pt, gen, ok)
	}
	if _, _, ok := again.LookupGroup("gone"); ok {
		t.Fatal("deleted group came back")
	}

	// A clean shutdown, then a restart that replays nothing.
	if err := again.Close(ctx); err != nil {
		t.Fatal(err)
	}
	third, _ := open()
	if !reflect.DeepEqual(before, snapshotAll(third)) {
		t.Fatal("state after clean restart differs")
	}
	for _, p := range third.parts {
		if p.sinceCheckpoint != 0 {
			t.Fatalf("partition %d replayed %d records after a clean shutdown", p.id, p.sinceCheckpoint)
		}
	}
}
