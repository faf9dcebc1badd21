package offsets

import (
	"context"
	"errors"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/twmb/franz-go/pkg/kerr"
)

// openUnowned returns a store over log that owns no partition yet, closed when the test ends.
func openUnowned(t *testing.T, log iggylog.Log) *Store {
	t.Helper()
	s, err := New(testConfig(log))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// TestTakeoverKeepsEveryCommit hands a log partition back and forth between two stores over
// one log, as two gateways do: each new owner sees every commit the previous one
// acknowledged, and a released partition answers NOT_COORDINATOR.
func TestTakeoverKeepsEveryCommit(t *testing.T) {
	log := iggylog.NewMem(testPartitions)
	a, b := openUnowned(t, log), openUnowned(t, log)
	k := PartitionFor("g", testPartitions)
	if err := a.Serving("g"); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("before Acquire: %v, want NOT_COORDINATOR", err)
	}
	if errs := a.Commit(t.Context(), "g", []Commit{commit("t", 0, 5, -1, "")}); !errors.Is(errs[0], kerr.NotCoordinator) {
		t.Fatalf("commit before Acquire: %v", errs[0])
	}
	owner, other := a, b
	for round := range 4 {
		if err := owner.Acquire(t.Context(), k); err != nil {
			t.Fatal(err)
		}
		if !owner.Owns(k) || owner.Serving("g") != nil {
			t.Fatalf("round %d: the new owner does not serve g", round)
		}
		if round > 0 {
			if got := fetchOne(t, owner, "g", "t", 0); got.Offset != int64(10*round) {
				t.Fatalf("round %d: the new owner sees offset %d, want %d", round, got.Offset, 10*round)
			}
		}
		mustCommit(t, owner, "g", commit("t", 0, int64(10*(round+1)), -1, ""))
		owner.Release(k)
		if _, err := owner.Fetch("g", nil); !errors.Is(err, kerr.NotCoordinator) {
			t.Fatalf("round %d: released partition answers %v", round, err)
		}
		owner, other = other, owner
	}
	var listed []string
	a.RangeGroups(func(name, _ string) { listed = append(listed, name) })
	if len(listed) != 0 {
		t.Errorf("a store lists groups of partitions it does not own: %v", listed)
	}
}

// TestReleasedPartitionGetsNoCheckpointAtClose: a store must not write to a partition
// another store may own now.
func TestReleasedPartitionGetsNoCheckpointAtClose(t *testing.T) {
	log := iggylog.NewMem(testPartitions)
	s := openUnowned(t, log)
	k := PartitionFor("g", testPartitions)
	if err := s.Acquire(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s, "g", commit("t", 0, 1, -1, ""))
	s.Release(k)
	end, _ := log.End(t.Context(), k)
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if after, _ := log.End(t.Context(), k); after != end {
		t.Fatalf("Close appended %d records to a released partition", after-end)
	}
}
