package offsets

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

// pausableAPI is an Iggy client whose sends can be held, as if the gateway were stopped
// (SIGSTOP) with a send on its way: a held send reaches Iggy only after resume.
type pausableAPI struct {
	iggylog.API
	mu      sync.Mutex
	held    chan struct{} // nil: sends pass
	entered chan struct{}
}

func (a *pausableAPI) pause() {
	a.mu.Lock()
	a.held = make(chan struct{})
	a.mu.Unlock()
}

func (a *pausableAPI) resume() {
	a.mu.Lock()
	close(a.held)
	a.held = nil
	a.mu.Unlock()
}

func (a *pausableAPI) SendMessages(ctx context.Context, stream, topic iggy.Identifier, partition uint32, msgs []iggy.Message) (iggy.SendConfirmation, error) {
	a.mu.Lock()
	held := a.held
	a.mu.Unlock()
	if held != nil {
		a.entered <- struct{}{}
		<-held
	}
	return a.API.SendMessages(ctx, stream, topic, partition, msgs)
}

// ownerStore opens a store over api owning no partition, then takes over log partition k.
func ownerStore(t *testing.T, api iggylog.API, stream string, node int32, k int) *Store {
	t.Helper()
	cfg := testConfig(iggylog.NewTopic(api, stream, DefaultTopic, DefaultPartitions))
	cfg.Node = node
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	s.Claim(k)
	if err := s.Acquire(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPausedOwnerIsFenced: a gateway paused with a write on its way to Iggy and more queued
// loses its coordinator-log partition to another gateway, which commits; when the old owner
// resumes, its late write lands after the new owner's fence. A third gateway's replay must
// show exactly the new owner's committed offsets and generation, and the old owner must
// answer its clients NOT_COORDINATOR, never acknowledge.
func TestPausedOwnerIsFenced(t *testing.T) {
	for _, tt := range []struct {
		name     string
		inFlight string // what the held send carries: "commit" or "generation"
		release  bool   // the old owner sees the membership change before it resumes
	}{
		{"late commit", "commit", false},
		{"late generation", "generation", false},
		{"late commit after release", "commit", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := iggyBackend(t)
			stream := uniqueStream(t)
			const group = "orders-app"
			k := PartitionFor(group, DefaultPartitions)
			ctx := t.Context()

			oldAPI := &pausableAPI{API: dial(t, cfg), entered: make(chan struct{}, 16)}
			old := ownerStore(t, oldAPI, stream, 1, k)
			mustCommit(t, old, group, commit("t", 0, 10, -1, ""))
			if err := old.RecordGeneration(ctx, group, 3, "consumer", 1); err != nil {
				t.Fatal(err)
			}

			// The old owner stops with one write on its way to Iggy and one queued.
			oldAPI.pause()
			results := make(chan error, 2)
			if tt.inFlight == "commit" {
				go func() { results <- errors.Join(old.Commit(ctx, group, []Commit{commit("t", 0, 11, -1, "")})...) }()
			} else {
				old.OnGeneration(groups.GenerationEvent{Group: group, Generation: 9, ProtocolType: "consumer", Members: 1})
			}
			<-oldAPI.entered
			go func() { results <- errors.Join(old.Commit(ctx, group, []Commit{commit("t", 1, 12, -1, "")})...) }()
			waitQueued(t, old, group, 1)

			// Another gateway takes the partition over and commits.
			next := ownerStore(t, dial(t, cfg), stream, 2, k)
			if got := fetchOne(t, next, group, "t", 0); got.Offset != 10 {
				t.Fatalf("the new owner loaded offset %d, want 10", got.Offset)
			}
			mustCommit(t, next, group, commit("t", 0, 20, -1, ""))
			if err := next.RecordGeneration(ctx, group, 5, "consumer", 1); err != nil {
				t.Fatal(err)
			}

			if tt.release {
				old.Release(k)
			}
			oldAPI.resume()
			want := 1
			if tt.inFlight == "commit" {
				want = 2
			}
			for range want {
				select {
				case err := <-results:
					if ErrorCode(err) != kerr.NotCoordinator.Code {
						t.Fatalf("the old owner answered %v, want NOT_COORDINATOR", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the old owner did not answer its clients")
				}
			}
			// The held send did reach Iggy, after the new owner's fence.
			waitFor(t, func() bool { return lateRecordLanded(t, cfg, stream, k, tt.inFlight) })
			if old.Owns(k) {
				t.Fatal("the fenced owner still owns the partition")
			}

			// A third gateway replays the log: exactly the new owner's state.
			third := ownerStore(t, dial(t, cfg), stream, 3, k)
			if got := fetchOne(t, third, group, "t", 0); got.Offset != 20 {
				t.Fatalf("replayed offset %d, want the new owner's 20", got.Offset)
			}
			if got := fetchOne(t, third, group, "t", 1); got.Offset != -1 {
				t.Fatalf("the old owner's queued commit was stored: %+v", got)
			}
			if pt, gen, ok := third.LookupGroup(group); !ok || gen != 5 || pt != "consumer" {
				t.Fatalf("replayed generation %d %q %v, want the new owner's 5", gen, pt, ok)
			}
		})
	}
}

// lateRecordLanded reports whether the log partition holds, after a fence of epoch 2 or more,
// a record of epoch 1 of the given kind: the paused owner's late write.
func lateRecordLanded(t *testing.T, cfg iggy.Config, stream string, k int, kind string) bool {
	t.Helper()
	log := iggylog.NewTopic(dial(t, cfg), stream, DefaultTopic, DefaultPartitions)
	entries, err := log.ReadFrom(t.Context(), k, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	fenced := false
	for _, e := range entries {
		r, err := DecodeRecord(e.Data)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Kind == KindFence && r.Epoch >= 2:
			fenced = true
		case fenced && r.Epoch == 1 && (kind == "commit" && r.Kind == KindCommit || kind == "generation" && r.Kind == KindGeneration):
			return true
		}
	}
	return false
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// racingLog appends another gateway's fence of the given epoch just before this store's own
// fence: two gateways that read the same log took the partition over at the same moment.
type racingLog struct {
	iggylog.Log
	epoch uint64
	once  sync.Once
}

func (l *racingLog) Append(ctx context.Context, partition int, records [][]byte) (uint64, error) {
	if r, err := DecodeRecord(records[0]); err == nil && r.Kind == KindFence {
		l.once.Do(func() {
			other := Record{Kind: KindFence, Checkpoint: NoCheckpoint, Epoch: l.epoch, Node: 9}
			_, _ = l.Log.Append(ctx, partition, [][]byte{other.encode(nil)})
		})
	}
	return l.Log.Append(ctx, partition, records)
}

// TestSimultaneousTakeoverOneWins: of two fences of the same epoch, the first in the log
// wins; the gateway whose fence came second does not serve the partition (it retries), and
// replay ignores its fence.
func TestSimultaneousTakeoverOneWins(t *testing.T) {
	mem := iggylog.NewMem(1)
	first := openStore(t, mem) // epoch 1
	mustCommit(t, first, "g", commit("t", 0, 1, -1, ""))
	if err := first.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, err := New(testConfig(&racingLog{Log: mem, epoch: 2}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close(context.Background()) }()
	s.Claim(0)
	if err := s.Acquire(t.Context(), 0); !errors.Is(err, errFenced) {
		t.Fatalf("Acquire after losing the race: %v, want errFenced", err)
	}
	if s.Owns(0) || s.Serving("g") == nil {
		t.Fatal("the losing gateway serves the partition")
	}
	// Retrying takes the partition over above the winner's epoch.
	if err := s.Acquire(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if got := s.Epoch(0); got != 3 {
		t.Fatalf("epoch after the retry %d, want 3", got)
	}
	if got := fetchOne(t, s, "g", "t", 0); got.Offset != 1 {
		t.Fatalf("offset %d after the retry, want 1", got.Offset)
	}
}

// TestVersion1LogReplays: a log written before owner epochs (record version 1, no fences)
// replays as epoch 0, and the first owner after the upgrade fences it with epoch 1.
func TestVersion1LogReplays(t *testing.T) {
	mem := iggylog.NewMem(1)
	var recs [][]byte
	for _, r := range []Record{
		{Kind: KindCommit, Checkpoint: NoCheckpoint, Group: GroupState{Name: "g", Topics: []TopicOffsets{{Topic: "t", Partitions: []PartitionOffset{{Partition: 0, Committed: Committed{Offset: 5, LeaderEpoch: -1}}}}}}},
		{Kind: KindCheckpoint, Checkpoint: NoCheckpoint, CheckpointID: 7, Total: 1, Groups: []GroupState{{Name: "g", HasGeneration: true, Generation: 2, ProtocolType: "consumer",
			Topics: []TopicOffsets{{Topic: "t", Partitions: []PartitionOffset{{Partition: 0, Committed: Committed{Offset: 5, LeaderEpoch: -1}}}}}}}},
		{Kind: KindCommit, Checkpoint: 1, Group: GroupState{Name: "g", Topics: []TopicOffsets{{Topic: "t", Partitions: []PartitionOffset{{Partition: 1, Committed: Committed{Offset: 6, LeaderEpoch: -1}}}}}}},
	} {
		recs = append(recs, r.encodeVersion(nil, recordV1))
	}
	if _, err := mem.Append(t.Context(), 0, recs); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, mem)
	if a, b := fetchOne(t, s, "g", "t", 0), fetchOne(t, s, "g", "t", 1); a.Offset != 5 || b.Offset != 6 {
		t.Fatalf("offsets %d %d, want 5 6", a.Offset, b.Offset)
	}
	if _, gen, ok := s.LookupGroup("g"); !ok || gen != 2 {
		t.Fatalf("generation %d %v", gen, ok)
	}
	if got := s.Epoch(0); got != 1 {
		t.Fatalf("epoch %d, want 1", got)
	}
}

// TestReleasedOwnerWritesNothingMore: an append on its way when the partition is released
// still counts (it lands before any new owner's fence), but the owner writes nothing after
// it, not even the checkpoint that append made due.
func TestReleasedOwnerWritesNothingMore(t *testing.T) {
	mem := iggylog.NewMem(1)
	log := newGateLog(mem)
	s := openStore(t, log, func(c *Config) { c.CheckpointEvery = 1 })
	before := len(mem.Records(0))
	log.hold()
	done := make(chan error, 1)
	go func() { done <- errors.Join(s.Commit(t.Context(), "g", []Commit{commit("t", 0, 1, -1, "")})...) }()
	<-log.entered
	s.Release(0)
	log.release()
	if err := <-done; err != nil {
		t.Fatalf("the append on its way when released: %v", err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := len(mem.Records(0)) - before; got != 1 {
		t.Fatalf("%d records appended after the release began, want only the commit on its way", got)
	}
}

// Gateways configured alone (no BROKERS list) that share an Iggy each keep serving their own
// groups, and every replay sees all their commits, as before fencing: they write no fences and
// never give a partition up for what the others appended (Config.Unfenced). Fenced, the second
// start took every partition from the first, whose groups then answered NOT_COORDINATOR for
// good. Also after a fenced (BROKERS) run left epochs in the log, their records are replayed.
func TestStandaloneGatewaysShareTheLog(t *testing.T) {
	mem := iggylog.NewMem(DefaultPartitions)
	fenced := openStore(t, mem) // a run of a gateway in a BROKERS deployment: fences at epoch 1
	mustCommit(t, fenced, "old", commit("t", 0, 1, -1, ""))
	unfenced := func(c *Config) { c.Unfenced = true }
	a := openStore(t, mem, unfenced)
	b := openStore(t, mem, unfenced)
	for i := range 3 {
		mustCommit(t, a, "group-a", commit("t", 0, int64(10+i), -1, ""))
		mustCommit(t, b, "group-b", commit("t", 0, int64(20+i), -1, ""))
	}
	reader := openStore(t, mem, unfenced)
	for group, want := range map[string]int64{"old": 1, "group-a": 12, "group-b": 22} {
		if got := fetchOne(t, reader, group, "t", 0); got.Offset != want {
			t.Errorf("%s replayed at %d, want %d", group, got.Offset, want)
		}
	}
}
