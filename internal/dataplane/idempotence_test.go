package dataplane

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/mapping"
	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// idemBatch is a v2 batch of values from producer pid at epoch, starting at sequence seq.
func idemBatch(t testing.TB, pid int64, epoch int16, seq int32, values ...string) []byte {
	t.Helper()
	vs := make([][]byte, len(values))
	for i, v := range values {
		vs[i] = []byte(v)
	}
	raw := testutil.ProduceBatch(t, 0, vs, nil)
	binary.BigEndian.PutUint64(raw[43:], uint64(pid))
	binary.BigEndian.PutUint16(raw[51:], uint16(epoch))
	binary.BigEndian.PutUint32(raw[53:], uint32(seq))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// produceIdem produces one batch to partition 0 of topic and returns its code and offset.
func (g *gateway) produceIdem(t *testing.T, topic string, pid int64, epoch int16, seq int32, values ...string) (int16, int64) {
	t.Helper()
	return g.produceCode(t, testutil.ProducePartitionReq(9, -1, topic, 0, idemBatch(t, pid, epoch, seq, values...)))
}

type produced struct {
	code   int16
	offset int64
}

// Kafka's sequence and epoch rules on the wire: a retry is answered with its original offset
// and not written again; gaps, stale epochs and batches Kafka refuses get Kafka's codes; a
// refused batch changes nothing (docs/IDEMPOTENCE.md §1).
func TestIdempotentProduceRules(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "idem", 1)
	const pid = 1000
	twoBatches := append(idemBatch(t, pid, 0, 3, "x"), idemBatch(t, pid, 0, 4, "y")...)
	steps := []struct {
		name string
		req  *kmsg.ProduceRequest
		want produced
	}{
		{"first batch", testutil.ProducePartitionReq(9, -1, "idem", 0, idemBatch(t, pid, 0, 0, "a", "b", "c")), produced{0, 0}},
		{"retry of it", testutil.ProducePartitionReq(9, -1, "idem", 0, idemBatch(t, pid, 0, 0, "a", "b", "c")), produced{0, 0}},
		{"next batch", testutil.ProducePartitionReq(9, -1, "idem", 0, idemBatch(t, pid, 0, 3, "d")), produced{0, 3}},
		{"gap", testutil.ProducePartitionReq(9, -1, "idem", 0, idemBatch(t, pid, 0, 9, "z")), produced{kerr.OutOfOrderSequenceNumber.Code, -1}},
		{"overlap", testutil.ProducePartitionReq(9, -1, "idem", 0, idemBatch(t, pid, 0, 2, "z", "z")), produced{kerr.OutOfOrderSequenceNumber.Code, -1}},
		{"sequence -1 with a producer id", testutil.ProducePartitionReq(9, -1, "idem", 0, idemBatch(t, pid, 0, -1, "z")), produced{kerr.InvalidRecord.Code, -1}},
		{"two batches of one producer", testutil.ProducePartitionReq(9, -1, "idem", 0, twoBatches), produced{kerr.InvalidRecord.Code, -1}},
		{"after the refusals, in sequence", testutil.ProducePartitionReq(9, -1, "idem", 0, idemBatch(t, pid, 0, 4, "e")), produced{0, 4}},
		{"epoch bump not at 0", testutil.ProducePartitionReq(9, -1, "idem", 0, idemBatch(t, pid, 1, 5, "z")), produced{kerr.OutOfOrderSequenceNumber.Code, -1}},
		{"epoch bump at 0", testutil.ProducePartitionReq(9, -1, "idem", 0, idemBatch(t, pid, 1, 0, "f")), produced{0, 5}},
		{"stale epoch", testutil.ProducePartitionReq(9, -1, "idem", 0, idemBatch(t, pid, 0, 5, "z")), produced{kerr.InvalidProducerEpoch.Code, -1}},
		{"another producer at any sequence", testutil.ProducePartitionReq(9, -1, "idem", 0, idemBatch(t, pid+1, 0, 42, "g")), produced{0, 6}},
		{"a non-idempotent batch", testutil.ProducePartitionReq(9, -1, "idem", 0, testutil.ProduceBatch(t, 0, [][]byte{[]byte("h")}, nil)), produced{0, 7}},
	}
	for _, s := range steps {
		code, off := g.produceCode(t, s.req)
		if (produced{code, off}) != s.want {
			t.Errorf("%s: code %d offset %d, want code %d offset %d", s.name, code, off, s.want.code, s.want.offset)
		}
	}
	if hw := g.hw(t, "idem", 0); hw != 8 {
		t.Errorf("partition holds %d messages, want 8: nothing refused or retried was written", hw)
	}
	got := fetchedRecords(t, &g.fetchResp(t, ctxT(t), testutil.FetchPartitionsReq(12, "idem", 0, 0)).Topics[0].Partitions[0])
	var values string
	for _, r := range got {
		values += string(r.Value)
	}
	if values != "abcdefgh" {
		t.Errorf("records %q, want abcdefgh", values)
	}
	if n := g.b.ProducerUsage().Producers(); n != 2 {
		t.Errorf("usage counts %d producers, want 2", n)
	}
}

// After a restart the gateway rebuilds a partition's producer state from its tail before the
// first idempotent write: a retry of a batch written before the restart is answered with its
// offset, not written again.
func TestIdempotentRebuildAfterRestart(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "rb", 1)
	const pid = 77
	for i := range int32(4) {
		if code, off := g.produceIdem(t, "rb", pid, 0, i*2, "a", "b"); code != 0 || off != int64(i*2) {
			t.Fatalf("batch %d: code %d offset %d", i, code, off)
		}
	}
	g.produceCode(t, testutil.ProducePartitionReq(9, -1, "rb", 0, testutil.ProduceBatch(t, 0, [][]byte{[]byte("plain")}, nil)))

	g2 := g.restart()
	for _, s := range []struct {
		name string
		seq  int32
		want produced
	}{
		{"retry of the last batch", 6, produced{0, 6}},
		{"retry of an earlier batch", 2, produced{0, 2}},
		{"gap", 10, produced{kerr.OutOfOrderSequenceNumber.Code, -1}},
		{"next batch", 8, produced{0, 9}},
	} {
		code, off := g2.produceIdem(t, "rb", pid, 0, s.seq, "a", "b")
		if (produced{code, off}) != s.want {
			t.Errorf("%s: code %d offset %d, want %+v", s.name, code, off, s.want)
		}
	}
	if hw := g.hw(t, "rb", 0); hw != 11 {
		t.Errorf("partition holds %d messages, want 11", hw)
	}
}

// The rebuild reads only PRODUCER_REBUILD_MESSAGES of the tail: a producer whose batches lie
// before it is unknown after the restart and accepted at any sequence, as Kafka accepts a
// producer whose records were deleted.
func TestIdempotentRebuildTailIsBounded(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_PRODUCER_REBUILD_MESSAGES=2"}})
	g.mkTopic("kafka", "tail", 1)
	g.produceIdem(t, "tail", 5, 0, 0, "old")
	g.produceIdem(t, "tail", 6, 0, 0, "x", "y")
	g2 := g.restart()
	if code, off := g2.produceIdem(t, "tail", 6, 0, 0, "x", "y"); code != 0 || off != 1 {
		t.Errorf("retry of a batch in the tail: code %d offset %d, want its offset 1", code, off)
	}
	if code, off := g2.produceIdem(t, "tail", 5, 0, 7, "new"); code != 0 || off != 3 {
		t.Errorf("producer before the tail: code %d offset %d, want accepted at 3", code, off)
	}
}

// With IDEMPOTENT_PRODUCERS=false every batch is written as sent, without producer headers.
func TestIdempotenceOff(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_IDEMPOTENT_PRODUCERS=false"}})
	g.mkTopic("kafka", "off", 1)
	for i := range 2 {
		if code, off := g.produceIdem(t, "off", 9, 0, 0, "a"); code != 0 || off != int64(i) {
			t.Errorf("send %d: code %d offset %d", i, code, off)
		}
	}
	polled := g.pollAll(t, "off")
	for _, m := range polled {
		if _, ok, err := mapping.ProducerOfMessage(&mapping.Stored{Offset: m.Offset, Headers: m.Headers}); ok || err != nil {
			t.Errorf("offset %d carries producer headers (%v)", m.Offset, err)
		}
	}
	if g.b.ProducerUsage().Producers() != 0 {
		t.Error("producer state kept with idempotence off")
	}
}

// pollAll reads every message of partition 0 of topic natively.
func (g *gateway) pollAll(t *testing.T, topic string) []iggy.PolledMessage {
	t.Helper()
	p := uint32(0)
	polled, err := g.iggy.PollMessages(ctxT(t), iggy.PollRequest{Consumer: iggy.Consumer{Kind: iggy.ConsumerKindConsumer, ID: iggy.ID(1)},
		Stream: iggy.Name("kafka"), Topic: iggy.Name(topic), Partition: &p, Strategy: iggy.PollingStrategy{Kind: iggy.PollFirst}, Count: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return polled.Messages
}

// uncertainSends makes chosen sends end as a lost connection after the request went out:
// landed ones are applied first, the others are not. Polls can be made to fail.
type uncertainSends struct {
	iggy.API
	decide    func() (fail, land bool) // nil: every send goes through
	mu        sync.Mutex
	pollFails atomic.Bool
	sends     atomic.Int64
}

func (u *uncertainSends) SendBatch(ctx context.Context, stream, topic iggy.Identifier, partition uint32, b *iggy.Batch) (iggy.SendConfirmation, error) {
	u.sends.Add(1)
	u.mu.Lock()
	decide := u.decide
	u.mu.Unlock()
	if decide == nil {
		return u.API.SendBatch(ctx, stream, topic, partition, b)
	}
	fail, land := decide()
	if !fail {
		return u.API.SendBatch(ctx, stream, topic, partition, b)
	}
	if land {
		if _, err := u.API.SendBatch(ctx, stream, topic, partition, b); err != nil {
			return iggy.SendConfirmation{}, err
		}
	}
	return iggy.SendConfirmation{}, &iggy.ConnError{Op: "send messages", Err: errors.New("connection reset"), Sent: true}
}

func (u *uncertainSends) PollMessages(ctx context.Context, req iggy.PollRequest) (*iggy.Polled, error) {
	if u.pollFails.Load() {
		return nil, &iggy.ConnError{Op: "poll messages", Err: errors.New("connection refused")}
	}
	return u.API.PollMessages(ctx, req)
}

func (u *uncertainSends) set(decide func() (fail, land bool)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.decide = decide
}

func always(fail, land bool) func() (bool, bool) { return func() (bool, bool) { return fail, land } }

// A send whose outcome is uncertain is read back before it is answered: found, it is answered
// as written and its retry is a duplicate; not found, it is answered with a retriable error
// and its retry is written once. When the read-back fails, the producer's next batch on the
// partition waits for the outcome (docs/IDEMPOTENCE.md §5).
func TestIdempotentUncertainWrites(t *testing.T) {
	var u *uncertainSends
	g := startGateway(t, gatewayOpts{bridge: true, wrap: func(a iggy.API) iggy.API { u = &uncertainSends{API: a}; return u }})
	g.mkTopic("kafka", "unc", 1)
	const pid = 3

	u.set(always(true, true))
	if code, off := g.produceIdem(t, "unc", pid, 0, 0, "a"); code != 0 || off != 0 {
		t.Errorf("landed uncertain write: code %d offset %d, want success at 0", code, off)
	}
	u.set(nil)
	if code, off := g.produceIdem(t, "unc", pid, 0, 0, "a"); code != 0 || off != 0 {
		t.Errorf("retry of the landed write: code %d offset %d, want its offset 0", code, off)
	}

	u.set(always(true, false))
	if code, _ := g.produceIdem(t, "unc", pid, 0, 1, "b"); code != kerr.RequestTimedOut.Code {
		t.Errorf("lost uncertain write: code %d, want REQUEST_TIMED_OUT", code)
	}
	u.set(nil)
	if code, off := g.produceIdem(t, "unc", pid, 0, 1, "b"); code != 0 || off != 1 {
		t.Errorf("retry of the lost write: code %d offset %d, want written at 1", code, off)
	}

	// The read-back fails: the outcome stays unknown, and the next batch waits for it.
	u.set(always(true, true))
	u.pollFails.Store(true)
	if code, _ := g.produceIdem(t, "unc", pid, 0, 2, "c"); code != kerr.RequestTimedOut.Code {
		t.Errorf("unresolved write: code %d, want REQUEST_TIMED_OUT", code)
	}
	u.set(nil)
	if code, _ := g.produceIdem(t, "unc", pid, 0, 2, "c"); code != kerr.RequestTimedOut.Code {
		t.Errorf("retry while Iggy cannot be read: code %d, want REQUEST_TIMED_OUT", code)
	}
	u.pollFails.Store(false)
	if code, off := g.produceIdem(t, "unc", pid, 0, 2, "c"); code != 0 || off != 2 {
		t.Errorf("retry once the read-back works: code %d offset %d, want its offset 2", code, off)
	}
	if hw := g.hw(t, "unc", 0); hw != 3 {
		t.Errorf("partition holds %d messages, want 3", hw)
	}
}

// generationPlacement is a single gateway's placement whose generation a test moves, as a
// membership change does.
type generationPlacement struct {
	placement.Single
	generation *atomic.Uint64
}

func (p generationPlacement) Generation() uint64 { return p.generation.Load() }

// Leadership can move away and back between two writes of a producer: another gateway wrote
// the producer's next batches meanwhile. After a placement change the partition's producer
// state is rebuilt from Iggy, so the producer's next batch is accepted (not 45) and a retry of
// what the other gateway wrote is answered as a duplicate (not written twice).
func TestIdempotentStateRebuiltAfterPlacementChange(t *testing.T) {
	gen := new(atomic.Uint64)
	g := startGateway(t, gatewayOpts{bridge: true, placement: generationPlacement{Single: placement.Single{NodeID: 1}, generation: gen}})
	g.mkTopic("kafka", "moved", 1)
	const pid = 78
	if code, off := g.produceIdem(t, "moved", pid, 0, 0, "a", "b"); code != 0 || off != 0 {
		t.Fatalf("first batch: code %d offset %d", code, off)
	}
	// The other gateway, leading the partition meanwhile, writes the producer's next batch.
	g2 := g.restart() // the other gateway's data plane
	if code, off := g2.produceIdem(t, "moved", pid, 0, 2, "c", "d"); code != 0 || off != 2 {
		t.Fatalf("the other gateway's batch: code %d offset %d", code, off)
	}
	gen.Add(1) // the leadership comes back
	for _, s := range []struct {
		name string
		seq  int32
		want produced
	}{
		{"retry of the other gateway's batch", 2, produced{0, 2}},
		{"next batch", 4, produced{0, 4}},
	} {
		if code, off := g.produceIdem(t, "moved", pid, 0, s.seq, "e", "f"); (produced{code, off}) != s.want {
			t.Errorf("%s: code %d offset %d, want %+v", s.name, code, off, s.want)
		}
	}
	if hw := g.hw(t, "moved", 0); hw != 6 {
		t.Errorf("partition holds %d messages, want 6", hw)
	}
}
