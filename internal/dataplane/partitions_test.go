package dataplane

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// Fetches of partitions and topics that do not exist leave no state behind, however many.
func TestFetchOfMissingPartitionsKeepsNoState(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "real", 1)
	partitions := make([]int32, 5000)
	for i := range partitions {
		partitions[i] = int32(i)
	}
	resp := g.fetchResp(t, ctxT(t), testutil.FetchPartitionsReq(12, "real", 0, partitions...))
	for _, p := range resp.Topics[0].Partitions[1:] {
		if p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("partition %d: code %d, want UNKNOWN_TOPIC_OR_PARTITION", p.Partition, p.ErrorCode)
		}
	}
	for i := range 100 {
		req := testutil.FetchPartitionsReq(12, fmt.Sprintf("missing-%d", i), 0, partitions[:50]...)
		if p := g.fetchResp(t, ctxT(t), req).Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("missing topic: code %d, want UNKNOWN_TOPIC_OR_PARTITION", p.ErrorCode)
		}
	}
	if n := g.b.data.partStates(); n != 1 {
		t.Errorf("state kept for %d partitions, want 1 (real/0)", n)
	}
}

// Deleting a topic forgets its partitions.
func TestDeleteTopicDropsPartitionState(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "doomed", 2)
	g.mkTopic("kafka", "kept", 1)
	for _, topic := range []string{"doomed", "kept"} {
		g.produceValues(t, topic, 0, []byte("v"))
	}
	g.fetchResp(t, ctxT(t), testutil.FetchPartitionsReq(12, "doomed", 0, 0, 1))
	if n := g.b.data.partStates(); n != 3 {
		t.Fatalf("state kept for %d partitions, want 3", n)
	}
	if err := g.iggy.DeleteTopic(ctxT(t), iggy.Name("kafka"), iggy.Name("doomed")); err != nil {
		t.Fatal(err)
	}
	g.b.TopicDeleted(g.b.topics.Map().Resolve("doomed"), true) // as DeleteTopics tells it
	if n := g.b.data.partStates(); n != 1 {
		t.Errorf("state kept for %d partitions after the delete, want 1 (kept/0)", n)
	}
}

// The kept state is bounded, and idle state is dropped, except what fetches wait on.
func TestPartStateBoundAndIdleDrop(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	d := &partitions{clock: func() time.Time { return now }}
	key := func(i int) partKey {
		return partKey{Target: topicmap.Target{Stream: "s", Topic: "t"}, Partition: uint32(i)}
	}

	waited := d.part(key(0))
	w := newWaiter()
	waited.addWaiter(w)
	for i := 1; i < maxPartStates+100; i++ {
		d.part(key(i))
	}
	if n := d.partStates(); n != maxPartStates {
		t.Fatalf("%d states after %d partitions, want the bound %d", n, maxPartStates+100, maxPartStates)
	}
	if st := d.part(key(maxPartStates + 50)); st == nil {
		t.Fatal("a partition past the bound gets no state to serve it with")
	}

	// Past the bound, state not used for partMinAge makes room; waited-on state stays.
	now = now.Add(partMinAge)
	recent := d.part(key(maxPartStates + 1))
	if n := d.partStates(); n != 2 {
		t.Fatalf("%d states after making room, want 2 (the waited-on and the new one)", n)
	}
	if d.part(key(0)) != waited || d.part(key(maxPartStates+1)) != recent {
		t.Error("making room dropped state in use")
	}

	// Below the bound, state idle for partIdleTTL is dropped once it is.
	waited.removeWaiter(w)
	now = now.Add(partIdleTTL)
	d.part(key(1))
	if n := d.partStates(); n != 1 {
		t.Errorf("%d states after everything else was idle for %v, want 1", n, partIdleTTL)
	}
}
