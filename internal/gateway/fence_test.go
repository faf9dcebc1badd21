package gateway

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
)

// A gateway whose coordinator-log partition was taken over by another gateway (a fence in the
// log) while the membership it sees still makes the partition its own claims it back (its
// groups answer COORDINATOR_LOAD_IN_PROGRESS, a takeover is pending) instead of leaving it
// without a coordinator until the next membership change; a partition the membership gives
// to the other gateway is left to it.
func TestFencedPartitionIsTakenBackWhenStillOwned(t *testing.T) {
	ctx := t.Context()
	mem := iggylog.NewMem(offsets.DefaultPartitions)
	c := &cluster{
		self:    1,
		log:     slog.New(slog.DiscardHandler),
		pending: make(map[int]context.CancelFunc),
		place: placement.NewCluster(placement.ClusterConfig{
			Nodes:       []placement.Node{{ID: 1, Host: "a", Port: 1}, {ID: 2, Host: "b", Port: 1}},
			PartitionOf: func(g string) int { return offsets.PartitionFor(g, offsets.DefaultPartitions) },
		}),
	}
	c.place.SetLive([]int32{1})
	cfg := offsets.DefaultConfig(mem)
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.OnFenced = c.retake
	store, err := offsets.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.store = store
	if err := store.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close(context.Background()) }()
	defer c.close()

	const group = "g"
	k := offsets.PartitionFor(group, offsets.DefaultPartitions)
	store.Claim(k)
	if err := store.Acquire(ctx, k); err != nil {
		t.Fatal(err)
	}
	// Another gateway takes k over: its fence has a higher epoch.
	otherCfg := offsets.DefaultConfig(mem)
	otherCfg.Logger = slog.New(slog.DiscardHandler)
	other, err := offsets.New(otherCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close(context.Background()) }()
	other.Claim(k)
	if err := other.Acquire(ctx, k); err != nil {
		t.Fatal(err)
	}
	errs := store.Commit(ctx, group, []offsets.Commit{{Topic: "t", Partition: 0, Offset: 1, LeaderEpoch: -1}})
	if !errors.Is(errs[0], kerr.NotCoordinator) {
		t.Fatalf("commit after the fence: %v, want NOT_COORDINATOR", errs[0])
	}
	c.mu.Lock()
	_, pending := c.pending[k]
	c.mu.Unlock()
	if !pending || !errors.Is(store.Serving(group), kerr.CoordinatorLoadInProgress) {
		t.Fatalf("pending takeover %v, serving %v; want a takeover and COORDINATOR_LOAD_IN_PROGRESS", pending, store.Serving(group))
	}

	// When the membership gives the partition to the other gateway, a fence is final.
	c.place.SetLive([]int32{1, 2})
	for j := range offsets.DefaultPartitions {
		if c.place.Owner(j) == 2 {
			c.retake(j)
			c.mu.Lock()
			_, pending := c.pending[j]
			c.mu.Unlock()
			if pending {
				t.Fatalf("partition %d of the other gateway taken back", j)
			}
			return
		}
	}
	t.Fatal("node 2 owns no partition")
}
