package dataplane

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// TestRecreatedTopicIsNoTruncation: a topic deleted and created again under the same name by a
// native Iggy client (not through the gateway, which would forget it) has lower offsets than
// the gateway wrote to the old one. That is a new topic, not a truncation: no epoch is bumped,
// the old topic's batches are not served from the tail cache, and once the gateway has asked
// Iggy again (within knownTopicTTL) consumers read the new records.
func TestRecreatedTopicIsNoTruncation(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	truncations := 0
	g := startGateway(t, gatewayOpts{bridge: true})
	g.b.data.clock = func() time.Time { return time.Unix(0, clock.Load()) }
	g.b.onTruncation = func() { truncations++ }
	g.mkTopic("kafka", "again", 1)
	for range 5 {
		g.produceValues(t, "again", 0, []byte("old-a"), []byte("old-b"))
	}
	ctx := ctxT(t)
	if got := fetchedRecords(t, &g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "again", 0, 0)).Topics[0].Partitions[0]); len(got) == 0 || string(got[0].Value) != "old-a" {
		t.Fatalf("old topic: %v", got)
	}
	if err := g.iggy.DeleteTopic(ctx, iggy.Name("kafka"), iggy.Name("again")); err != nil {
		t.Fatal(err)
	}
	g.mkTopic("kafka", "again", 1)
	g.writeNative(t, ctx, "again", "new")
	clock.Add(int64(2 * knownTopicTTL))
	resp := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "again", 0, 0))
	p := &resp.Topics[0].Partitions[0]
	if got := fetchedRecords(t, p); p.ErrorCode != 0 || p.HighWatermark != 1 || len(got) != 1 || string(got[0].Value) != "new" {
		t.Fatalf("fetch of the recreated topic: code %d hw %d records %v", p.ErrorCode, p.HighWatermark, got)
	}
	k := partKey{Target: g.b.topics.Map().Resolve("again"), Partition: 0}
	if truncations != 0 || g.b.epochs.current(k) != 0 {
		t.Errorf("%d truncations, epoch %d: want none", truncations, g.b.epochs.current(k))
	}
}

// A write confirmed while the fresh read that confirms a suspected drop was on its way raises
// the known high watermark past what that read could see; it is no truncation. A read that
// still ends before what was known when it was sent is one.
func TestConfirmDropIgnoresWritesDuringTheRead(t *testing.T) {
	at := func(hw uint64) *iggy.Partition {
		return &iggy.Partition{CreatedAt: 1, CurrentOffset: hw - 1, MessagesCount: hw}
	}
	var st partState
	st.observe(at(100))
	if !st.observe(at(90)) { // a read answered before writes the gateway had seen confirmed
		t.Fatal("a lower high watermark was not suspect")
	}
	known := st.highWatermark()
	st.advance(110, 100, 10) // confirmed while the fresh read is on its way
	if _, _, truncated := st.confirmDrop(at(100), known); truncated {
		t.Error("a write confirmed during the fresh read was taken for a truncation")
	}
	if hw := st.highWatermark(); hw != 110 {
		t.Errorf("high watermark %d after the read, want 110 (the confirmed write)", hw)
	}
	known = st.highWatermark()
	if from, to, truncated := st.confirmDrop(at(60), known); !truncated || from != 110 || to != 60 {
		t.Errorf("a log ending at 60 after 110 was known: truncated %v from %d to %d", truncated, from, to)
	}
}

// Two reads that notice the same drop at once (the offset probes after a reconnect and a
// Fetch) both knew the old end when they were sent: the truncation is counted once, and only
// a log that ends lower still is a second one.
func TestConfirmDropCountsOneTruncationOnce(t *testing.T) {
	at := func(hw uint64) *iggy.Partition {
		return &iggy.Partition{CreatedAt: 1, CurrentOffset: hw - 1, MessagesCount: hw}
	}
	var st partState
	st.observe(at(2000))
	known := st.highWatermark() // both reads are sent knowing 2000
	if from, to, truncated := st.confirmDrop(at(1500), known); !truncated || from != 2000 || to != 1500 {
		t.Fatalf("first confirmation: truncated %v from %d to %d, want 2000 → 1500", truncated, from, to)
	}
	if _, _, truncated := st.confirmDrop(at(1500), known); truncated {
		t.Error("the second read of the same drop counted it again")
	}
	if from, to, truncated := st.confirmDrop(at(1200), known); !truncated || from != 1500 || to != 1200 {
		t.Errorf("a further drop: truncated %v from %d to %d, want 1500 → 1200", truncated, from, to)
	}
	if hw := st.highWatermark(); hw != 1200 {
		t.Errorf("high watermark %d, want 1200", hw)
	}
}
