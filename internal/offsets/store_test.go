package offsets

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestCommitFetchRoundTrip(t *testing.T) {
	s := openStore(t, iggylog.NewMem(testPartitions))
	mustCommit(t, s, "g",
		commit("t", 0, 0, -1, ""),               // offset 0, no leader epoch
		commit("t", 1, 42, 7, "checkpoint=abc"), // metadata and epoch
		commit("u", 3, 1<<50, 0, strings.Repeat("m", 4096)),
	)
	tests := []struct {
		topic string
		part  int32
		want  Committed
	}{
		{"t", 0, Committed{Offset: 0, LeaderEpoch: -1, CommitTime: 1_700_000_000_000}},
		{"t", 1, Committed{Offset: 42, LeaderEpoch: 7, Metadata: "checkpoint=abc", CommitTime: 1_700_000_000_000}},
		{"u", 3, Committed{Offset: 1 << 50, LeaderEpoch: 0, Metadata: strings.Repeat("m", 4096), CommitTime: 1_700_000_000_000}},
		{"t", 2, Committed{Offset: -1, LeaderEpoch: -1}}, // never committed
		{"v", 0, Committed{Offset: -1, LeaderEpoch: -1}},
	}
	for _, tt := range tests {
		if got := fetchOne(t, s, "g", tt.topic, tt.part); got != tt.want {
			t.Errorf("%s/%d: got %+v, want %+v", tt.topic, tt.part, got, tt.want)
		}
	}
	if got := fetchOne(t, s, "other", "t", 0); got.Offset != -1 {
		t.Errorf("other group sees %+v", got)
	}
	all, err := s.Fetch("g", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Topic != "t" || len(all[0].Partitions) != 2 || all[1].Topic != "u" || all[0].Partitions[0].Partition != 0 {
		t.Fatalf("fetch all %+v", all)
	}
	if none, err := s.Fetch("nobody", nil); err != nil || len(none) != 0 {
		t.Fatalf("fetch all of unknown group: %v %v", none, err)
	}
	// A later commit overwrites, also with a smaller offset (kafka-consumer-groups --reset-offsets).
	mustCommit(t, s, "g", commit("t", 1, 3, -1, ""))
	if got := fetchOne(t, s, "g", "t", 1); got.Offset != 3 || got.Metadata != "" || got.LeaderEpoch != -1 {
		t.Fatalf("overwrite: %+v", got)
	}
}

func TestCommitValidation(t *testing.T) {
	s := openStore(t, iggylog.NewMem(testPartitions))
	errs := s.Commit(t.Context(), "g", []Commit{
		commit("t", 0, 1, -1, strings.Repeat("m", 4097)),
		commit(strings.Repeat("t", 256), 0, 1, -1, ""),
		commit("t", 1, 1, -1, ""),
	})
	if ErrorCode(errs[0]) != kerr.OffsetMetadataTooLarge.Code || ErrorCode(errs[1]) != kerr.UnknownTopicOrPartition.Code || errs[2] != nil {
		t.Fatalf("results %v", errs)
	}
	if got := fetchOne(t, s, "g", "t", 0); got.Offset != -1 {
		t.Fatal("refused commit stored")
	}
	for _, err := range s.Commit(t.Context(), strings.Repeat("g", 256), []Commit{commit("t", 0, 1, -1, "")}) {
		if ErrorCode(err) != kerr.InvalidGroupID.Code {
			t.Fatalf("long group id: %v", err)
		}
	}
}

func TestStoreNotLoadedOrClosed(t *testing.T) {
	log := iggylog.NewMem(testPartitions)
	s, err := New(testConfig(log))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(t.Context(), "g", []Commit{commit("t", 0, 1, -1, "")})[0]; ErrorCode(err) != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("commit before Load: %v", err)
	}
	if _, err := s.Fetch("g", nil); ErrorCode(err) != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("fetch before Load: %v", err)
	}
	if _, _, ok := s.LookupGroup("g"); ok {
		t.Fatal("lookup before Load")
	}
	if err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s, "g", commit("t", 0, 1, -1, ""))
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteGroup(t.Context(), "g"); ErrorCode(err) != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("delete after Close: %v", err)
	}
}

func TestAppendFailureIsNotAcknowledged(t *testing.T) {
	log := newRecordingLog(iggylog.NewMem(testPartitions))
	s := openStore(t, log)
	mustCommit(t, s, "g", commit("t", 0, 5, -1, ""))
	log.setFail(errInjected)
	errs := s.Commit(t.Context(), "g", []Commit{commit("t", 0, 6, -1, ""), commit("t", 1, 1, -1, "")})
	for _, err := range errs {
		if ErrorCode(err) != kerr.CoordinatorLoadInProgress.Code || !errors.Is(err, errInjected) {
			t.Fatalf("commit during append failure: %v", err)
		}
	}
	if got := fetchOne(t, s, "g", "t", 0); got.Offset != 5 {
		t.Fatalf("failed commit visible: %+v", got)
	}
	if _, err := s.DeleteGroup(t.Context(), "g"); ErrorCode(err) != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("delete during append failure: %v", err)
	}
	log.setFail(nil)
	mustCommit(t, s, "g", commit("t", 0, 6, -1, ""))
	if got := fetchOne(t, s, "g", "t", 0); got.Offset != 6 {
		t.Fatalf("retried commit: %+v", got)
	}
}

func TestDeleteOffsetsAndGroup(t *testing.T) {
	s := openStore(t, iggylog.NewMem(testPartitions))
	mustCommit(t, s, "g", commit("t", 0, 1, -1, ""), commit("t", 1, 2, -1, ""), commit("u", 0, 3, -1, ""))
	if err := s.DeleteOffsets(t.Context(), "g", []TopicPartitions{{Topic: "t", Partitions: []int32{0, 0, 9}}, {Topic: "none", Partitions: []int32{1}}}); err != nil {
		t.Fatal(err)
	}
	if got := fetchOne(t, s, "g", "t", 0); got.Offset != -1 {
		t.Fatal("deleted offset still there")
	}
	if got := fetchOne(t, s, "g", "t", 1); got.Offset != 2 {
		t.Fatal("other partition deleted")
	}
	// Deleting the last offsets of a group removes the group.
	if err := s.DeleteOffsets(t.Context(), "g", []TopicPartitions{{Topic: "t", Partitions: []int32{1}}, {Topic: "u", Partitions: []int32{0}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.LookupGroup("g"); ok {
		t.Fatal("group without offsets still listed")
	}
	mustCommit(t, s, "h", commit("t", 0, 1, -1, ""))
	if existed, err := s.DeleteGroup(t.Context(), "h"); !existed || err != nil {
		t.Fatalf("delete h: %v %v", existed, err)
	}
	if existed, err := s.DeleteGroup(t.Context(), "h"); existed || err != nil {
		t.Fatalf("delete h again: %v %v", existed, err)
	}
	if got := fetchOne(t, s, "h", "t", 0); got.Offset != -1 {
		t.Fatal("offsets of deleted group still there")
	}
}

func TestGenerations(t *testing.T) {
	s := openStore(t, iggylog.NewMem(testPartitions))
	ctx := t.Context()
	if err := s.RecordGeneration(ctx, "g", 3, "consumer", 2); err != nil {
		t.Fatal(err)
	}
	if pt, gen, ok := s.LookupGroup("g"); !ok || pt != "consumer" || gen != 3 {
		t.Fatalf("lookup %q %d %v", pt, gen, ok)
	}
	// Out-of-order (older) generations do not move it back.
	if err := s.RecordGeneration(ctx, "g", 2, "consumer", 2); err != nil {
		t.Fatal(err)
	}
	if _, gen, _ := s.LookupGroup("g"); gen != 3 {
		t.Fatalf("generation went back to %d", gen)
	}
	// Empty without offsets: forgotten. Empty with offsets: kept, with its generation.
	if err := s.RecordGeneration(ctx, "g", 4, "consumer", 0); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.LookupGroup("g"); ok {
		t.Fatal("empty group without offsets kept")
	}
	mustCommit(t, s, "h", commit("t", 0, 1, -1, ""))
	if err := s.RecordGeneration(ctx, "h", 9, "consumer", 0); err != nil {
		t.Fatal(err)
	}
	if pt, gen, ok := s.LookupGroup("h"); !ok || gen != 9 || pt != "consumer" {
		t.Fatalf("lookup h %q %d %v", pt, gen, ok)
	}
	names := map[string]string{}
	s.RangeGroups(func(name, pt string) { names[name] = pt })
	if len(names) != 1 || names["h"] != "consumer" {
		t.Fatalf("range %v", names)
	}
}

// exercise runs a deterministic mix of every operation over many groups.
func exercise(t testing.TB, s *Store, rounds int) {
	t.Helper()
	ctx := t.Context()
	for i := range rounds {
		g := fmt.Sprintf("group-%d", i%23)
		mustCommit(t, s, g, commit("t", int32(i%5), int64(i), int32(i%3)-1, fmt.Sprintf("m%d", i)), commit("u", 0, 0, -1, ""))
		switch {
		case i%17 == 0:
			if err := s.DeleteOffsets(ctx, g, []TopicPartitions{{Topic: "t", Partitions: []int32{int32(i % 5)}}}); err != nil {
				t.Fatal(err)
			}
		case i%41 == 0:
			if _, err := s.DeleteGroup(ctx, g); err != nil {
				t.Fatal(err)
			}
		case i%7 == 0:
			if err := s.RecordGeneration(ctx, g, int32(i), "consumer", 1); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestRestartSeesEverything(t *testing.T) {
	log := iggylog.NewMem(testPartitions)
	s := openStore(t, log, func(c *Config) { c.CheckpointEvery = 1 << 30 })
	exercise(t, s, 300)
	before := snapshotAll(s)
	again := openStore(t, log)
	if after := snapshotAll(again); !reflect.DeepEqual(before, after) {
		t.Fatal("state after restart differs")
	}
	if !reflect.DeepEqual(before, replayAll(t, log)) {
		t.Fatal("live state differs from a full replay")
	}
}

func TestCheckpointPlusTailEqualsFullReplay(t *testing.T) {
	mem := iggylog.NewMem(testPartitions)
	s := openStore(t, mem, func(c *Config) { c.CheckpointEvery = 10 })
	exercise(t, s, 500)
	before := snapshotAll(s)
	if !reflect.DeepEqual(before, replayAll(t, mem)) {
		t.Fatal("live state differs from a full replay")
	}
	log := newRecordingLog(mem)
	again := openStore(t, log, func(c *Config) { c.CheckpointEvery = 10 })
	if !reflect.DeepEqual(before, snapshotAll(again)) {
		t.Fatal("state after restart differs")
	}
	// Startup read each partition from its latest checkpoint, not from the beginning.
	for i, p := range again.parts {
		end, _ := mem.End(t.Context(), i)
		if p.checkpoint == NoCheckpoint {
			t.Fatalf("partition %d has no checkpoint after %d records", i, end)
		}
		if min := log.minRead[i]; min < p.checkpoint || end-min > 2*10+4 {
			t.Fatalf("partition %d: startup read from %d (checkpoint %d, end %d)", i, min, p.checkpoint, end)
		}
	}
}

func TestCleanShutdownCheckpointsEverything(t *testing.T) {
	mem := iggylog.NewMem(testPartitions)
	s := openStore(t, mem)
	exercise(t, s, 100)
	before := snapshotAll(s)
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	log := newRecordingLog(mem)
	again := openStore(t, log)
	if !reflect.DeepEqual(before, snapshotAll(again)) {
		t.Fatal("state after restart differs")
	}
	for i, p := range again.parts {
		end, _ := mem.End(t.Context(), i)
		if p.sinceCheckpoint != 0 || log.minRead[i] != p.checkpoint || end-p.checkpoint > 2 {
			t.Fatalf("partition %d: replayed %d records, read from %d, checkpoint %d, end %d", i, p.sinceCheckpoint, log.minRead[i], p.checkpoint, end)
		}
	}
}

func TestLargeCommitAndCheckpointAreSplit(t *testing.T) {
	mem := iggylog.NewMem(1)
	s := openStore(t, mem, func(c *Config) { c.MaxRecordBytes = 64 << 10; c.CheckpointEvery = 1 << 30 })
	var commits []Commit
	for p := range 3000 {
		commits = append(commits, commit(fmt.Sprintf("topic-%d", p%7), int32(p), int64(p), 1, strings.Repeat("x", 40)))
	}
	mustCommit(t, s, "big", commits...)
	if n := len(mem.Records(0)); n < 3 {
		t.Fatalf("a %d-partition commit was written as %d records", len(commits), n)
	}
	for off, r := range mem.Records(0) {
		if len(r) > 64<<10 {
			t.Fatalf("record %d is %d bytes", off, len(r))
		}
	}
	before := snapshotAll(s)
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	again := openStore(t, mem)
	if !reflect.DeepEqual(before, snapshotAll(again)) {
		t.Fatal("state after restart differs")
	}
	if again.parts[0].checkpoint == NoCheckpoint {
		t.Fatal("no checkpoint used")
	}
}

func TestConcurrentCommits(t *testing.T) {
	mem := iggylog.NewMem(testPartitions)
	s := openStore(t, mem, func(c *Config) { c.CheckpointEvery = 25 })
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			g := fmt.Sprintf("g%d", w%3)
			for i := range 100 {
				// t.Error, not t.Fatal: this is not the test's goroutine.
				if err := errors.Join(s.Commit(t.Context(), g, []Commit{commit("t", int32(w), int64(i), -1, "")})...); err != nil {
					t.Error(err)
					return
				}
				if _, err := s.Fetch(g, nil); err != nil {
					t.Error(err)
				}
				s.LookupGroup(g)
				s.RangeGroups(func(string, string) {})
			}
		})
	}
	wg.Wait()
	for w := range 8 {
		if got := fetchOne(t, s, fmt.Sprintf("g%d", w%3), "t", int32(w)); got.Offset != 99 {
			t.Fatalf("worker %d: %+v", w, got)
		}
	}
	if !reflect.DeepEqual(snapshotAll(s), snapshotAll(openStore(t, mem))) {
		t.Fatal("state after restart differs")
	}
}

func TestPartitionForIsStable(t *testing.T) {
	// These values (FNV-1a 32, checked with an independent implementation) are part of the
	// storage format: changing them orphans stored offsets.
	for group, want := range map[string]int{"": 5, "my-group": 13, "console-consumer-12345": 15, "g": 6} {
		if got := PartitionFor(group, DefaultPartitions); got != want {
			t.Errorf("PartitionFor(%q) = %d, want %d", group, got, want)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	cfg := testConfig(iggylog.NewMem(1))
	cfg.MaxRecordBytes = 1000
	cfg.CheckpointEvery = 0
	_, err := New(cfg)
	if err == nil || !strings.Contains(err.Error(), "MaxRecordBytes") || !strings.Contains(err.Error(), "CheckpointEvery") {
		t.Fatalf("error %v", err)
	}
}
