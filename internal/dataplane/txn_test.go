package dataplane

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

// members is a coordinator that answers Member with code and records what it was asked.
type members struct {
	mu    sync.Mutex
	code  int16
	asked []txn.TP
}

func (m *members) Member(_ int64, _ int16, tp txn.TP) int16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked = append(m.asked, tp)
	return m.code
}

// txnBatch is a transactional batch of producer 7, epoch 0, starting at sequence seq.
func txnBatch(t *testing.T, seq int32, values ...string) []byte {
	vs := make([][]byte, len(values))
	for i, v := range values {
		vs[i] = []byte(v)
	}
	return testutil.WithHeader(testutil.ProduceBatch(t, 0x10, vs, nil), func(b []byte) {
		binary.BigEndian.PutUint64(b[43:], 7)
		binary.BigEndian.PutUint16(b[51:], 0)
		binary.BigEndian.PutUint32(b[53:], uint32(seq))
	})
}

func txnProduce(id string, batch []byte) *kmsg.ProduceRequest {
	r := testutil.ProducePartitionReq(9, -1, "tx", 0, batch)
	if id != "" {
		r.TransactionID = &id
	}
	return r
}

// Produce writes a transactional batch only with a transactional id and when the coordinator
// says the producer's transaction includes the partition; nothing is written otherwise.
func TestTransactionalProduceAsksTheCoordinator(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "tx", 1)
	m := &members{code: kerr.InvalidTxnState.Code}
	g.b.SetTransactions(m)

	if code, _ := g.produceCode(t, txnProduce("", txnBatch(t, 0, "a"))); code != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("without a transactional id: code %d, want 53", code)
	}
	if code, _ := g.produceCode(t, txnProduce("tx-1", txnBatch(t, 0, "a"))); code != kerr.InvalidTxnState.Code {
		t.Errorf("not in the transaction: code %d, want 48", code)
	}
	if hw := g.hw(t, "tx", 0); hw != 0 {
		t.Fatalf("refused batches written: high watermark %d", hw)
	}
	m.mu.Lock()
	m.code = 0
	m.mu.Unlock()
	if code, base := g.produceCode(t, txnProduce("tx-1", txnBatch(t, 0, "a", "b"))); code != 0 || base != 0 {
		t.Fatalf("in the transaction: code %d base %d", code, base)
	}
	if m.asked[len(m.asked)-1] != (txn.TP{Topic: "tx", Partition: 0}) {
		t.Errorf("asked about %v", m.asked)
	}
}

// read_committed reads stop at the last stable offset while a transaction is open; after
// its abort they leave its records out and serve the marker as a control batch, while
// read_uncommitted reads everything; ListOffsets LATEST follows the isolation level.
func TestReadCommittedAroundAnAbort(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "tx", 1)
	g.b.SetTransactions(&members{})
	ctx := ctxT(t)
	g.produceValues(t, "tx", 0, []byte("before"))
	tp := txn.TP{Topic: "tx", Partition: 0}
	from, err := g.b.Begin(ctx, 7, tp)
	if err != nil || from != 1 {
		t.Fatalf("begin: %d %v", from, err)
	}
	if code, _ := g.produceCode(t, txnProduce("tx-1", txnBatch(t, 0, "x", "y"))); code != 0 {
		t.Fatalf("transactional produce: code %d", code)
	}
	g.produceValues(t, "tx", 0, []byte("after")) // offset 3, above the open transaction

	fetch := func(level int8) *kmsg.FetchResponseTopicPartition {
		req := testutil.FetchPartitionsReq(11, "tx", 0, 0)
		req.IsolationLevel = level
		return &g.fetchResp(t, ctx, req).Topics[0].Partitions[0]
	}
	values := func(p *kmsg.FetchResponseTopicPartition) []string {
		var out []string
		for _, r := range fetchedRecords(t, p) {
			out = append(out, string(r.Value))
		}
		return out
	}
	latest := func(level int8) int64 {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version, req.IsolationLevel = 7, level
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "tx"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := g.b.ListOffsets(ctx, dataConn, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].Offset
	}

	p := fetch(1)
	if got := values(p); len(got) != 1 || got[0] != "before" || p.LastStableOffset != 1 || p.HighWatermark != 4 {
		t.Errorf("read_committed, open: %v, LSO %d, HW %d", got, p.LastStableOffset, p.HighWatermark)
	}
	if l := latest(1); l != 1 {
		t.Errorf("read_committed LATEST while open: %d, want 1", l)
	}
	if got := values(fetch(0)); len(got) != 4 {
		t.Errorf("read_uncommitted, open: %v", got)
	}

	aborted, err := g.b.WriteMarkers(ctx, 7, 0, false, map[txn.TP]uint64{tp: from})
	if err != nil || len(aborted[tp]) != 1 || aborted[tp][0] != (txn.Range{From: 1, To: 3}) {
		t.Fatalf("abort: %v %v", aborted, err)
	}
	p = fetch(1)
	if got := values(p); len(got) != 2 || got[0] != "before" || got[1] != "after" || p.LastStableOffset != 5 {
		t.Errorf("read_committed, aborted: %v, LSO %d", got, p.LastStableOffset)
	}
	batches, err := kbatch.Split(nil, p.RecordBatches)
	if err != nil {
		t.Fatal(err)
	}
	control := 0
	for _, b := range batches {
		if b.Header.Control() {
			control++
			if b.Header.BaseOffset != 4 || b.Header.ProducerID != 7 {
				t.Errorf("marker batch %+v", b.Header)
			}
		}
	}
	if control != 1 {
		t.Errorf("%d control batches, want the abort marker", control)
	}
	if got := values(fetch(0)); len(got) != 4 {
		t.Errorf("read_uncommitted, aborted: %v", got)
	}
	if l := latest(1); l != 5 {
		t.Errorf("read_committed LATEST after the abort: %d, want 5", l)
	}
}
