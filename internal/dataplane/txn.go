package dataplane

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/mapping"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

// Transactions in the data plane (docs/TRANSACTIONS.md): Produce writes a transactional batch
// only when the coordinator says its producer's open transaction includes the partition
// (TxnMembers), and records where it went in the partition's txn.Partition; the Plane is the
// coordinator's txn.Finisher (Begin, WriteMarkers) and txn.Restorer; read_committed fetches
// and ListOffsets read up to the last stable offset and leave aborted records out.

// TxnMembers is what Produce asks the transaction coordinator (internal/txn) before writing a
// transactional batch: 0, or the Kafka code to refuse it with.
type TxnMembers interface {
	Member(pid int64, epoch int16, tp txn.TP) int16
}

// txnPart is one partition's transaction state.
type txnPart struct {
	// mu serializes the partition's transactional writes and markers: a batch is checked
	// against the coordinator and recorded in st before a marker can end its transaction, so
	// no batch of a transaction lands after its marker unrecorded.
	mu sync.Mutex
	st txn.Partition
	// aborted keeps the ranges the last abort marker of each producer ended, so that a
	// retried WriteMarkers (after a failure in another partition) returns them again.
	aborted map[int64][]txn.Range
}

// txnParts holds the partitions' transaction state, and the coordinator once wired.
type txnParts struct {
	mu      sync.Mutex
	members TxnMembers // nil: transactional batches are refused
	parts   map[partKey]*txnPart
}

// SetTransactions wires the transaction coordinator: from then on Produce accepts
// transactional batches it says belong to an open transaction.
func (dp *Plane) SetTransactions(m TxnMembers) {
	dp.txns.mu.Lock()
	defer dp.txns.mu.Unlock()
	dp.txns.members = m
}

func (t *txnParts) coordinator() TxnMembers {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.members
}

// part returns the partition's state, created when missing.
func (t *txnParts) part(k partKey) *txnPart {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.parts[k]
	if p == nil {
		if t.parts == nil {
			t.parts = map[partKey]*txnPart{}
		}
		p = &txnPart{}
		t.parts[k] = p
	}
	return p
}

// known returns the partition's state, nil when no transaction ever touched it (then the last
// stable offset is the high watermark and nothing is aborted).
func (t *txnParts) known(k partKey) *txnPart {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.parts[k]
}

func (t *txnParts) dropTopic(target partKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.parts {
		if k.Target == target.Target {
			delete(t.parts, k)
		}
	}
}

// keyOf is the partition key of a transaction's Kafka topic partition.
func (dp *Plane) keyOf(tp txn.TP) partKey {
	return partKey{Target: dp.topics.Map().Resolve(tp.Topic), Partition: uint32(tp.Partition)}
}

// sendTransactional writes a transactional batch when the coordinator says its producer's
// open transaction includes the partition, and records where it was written.
func (dp *Plane) sendTransactional(ctx context.Context, cc *listener.ConnContext, p *producePart, m TxnMembers) {
	tp := dp.txns.part(p.key)
	tp.mu.Lock()
	defer tp.mu.Unlock()
	pid, epoch := p.producer.ProducerID, p.producer.Epoch
	if code := m.Member(pid, epoch, txn.TP{Topic: p.kafka, Partition: p.out.Partition}); code != 0 {
		p.out.ErrorCode = code
		dp.logEntry(slog.LevelInfo, logIdempotentRefused, "produce: transactional batch refused", "conn", cc.ID, "client_id", cc.ClientID(),
			"topic", p.kafka, "partition", p.key.Partition, "producer_id", pid, "epoch", epoch, "kafka_error", code)
		return
	}
	dp.sendIdempotent(ctx, cc, p)
	if p.out.ErrorCode == 0 && p.out.BaseOffset >= 0 {
		tp.st.Wrote(pid, uint64(p.out.BaseOffset), uint64(p.producer.Records))
	}
}

// Begin is txn.Finisher's: the partition joins pid's transaction; its records will be at the
// partition's end as Iggy reports it now, or later.
func (dp *Plane) Begin(ctx context.Context, pid int64, tp txn.TP) (uint64, error) {
	if dp.bridgeOff() {
		return 0, kerr.NotLeaderForPartition
	}
	r, err := dp.topics.Resolve(ctx, tp.Topic)
	if err != nil {
		return 0, kerr.ErrorForCode(kafkacode.ForData(err, false))
	}
	if tp.Partition < 0 || uint32(tp.Partition) >= r.Partitions {
		return 0, kerr.UnknownTopicOrPartition
	}
	k := dp.keyOf(tp)
	part := dp.txns.part(k)
	part.mu.Lock()
	defer part.mu.Unlock()
	topic, err := dp.iggy.GetTopic(ctx, iggy.Name(k.Stream), iggy.Name(k.Topic))
	if err != nil {
		return 0, kerr.ErrorForCode(kafkacode.ForData(err, false))
	}
	ip, ok := PartitionOf(topic, tp.Partition)
	if !ok {
		return 0, kerr.UnknownTopicOrPartition
	}
	from := HighWatermark(ip)
	part.st.Begin(pid, from)
	delete(part.aborted, pid)
	return from, nil
}

// WriteMarkers is txn.Finisher's: it appends the producer's commit or abort marker to each
// partition (docs/STORAGE-FORMAT.md §2.5) and ends the transaction there, returning the
// ranges an abort leaves out of read_committed reads.
func (dp *Plane) WriteMarkers(ctx context.Context, pid int64, epoch int16, commit bool, parts map[txn.TP]uint64) (map[txn.TP][]txn.Range, error) {
	if dp.bridgeOff() {
		return nil, kerr.NotLeaderForPartition
	}
	out := map[txn.TP][]txn.Range{}
	for tp, from := range parts {
		rs, err := dp.writeMarker(ctx, pid, epoch, commit, tp, from)
		if err != nil {
			return nil, err
		}
		if len(rs) > 0 {
			out[tp] = rs
		}
	}
	return out, nil
}

func (dp *Plane) writeMarker(ctx context.Context, pid int64, epoch int16, commit bool, tp txn.TP, from uint64) ([]txn.Range, error) {
	k := dp.keyOf(tp)
	part := dp.txns.part(k)
	part.mu.Lock()
	defer part.mu.Unlock()
	if !commit {
		// A transaction restored from the log after a restart knows only its lower bound: its
		// records are found in Iggy before the marker ends it.
		if err := dp.recoverTxnBatches(ctx, k, part, pid, from); err != nil {
			return nil, err
		}
	}
	payload, headers := mapping.ControlMessage(pid, epoch, commit)
	b := iggy.NewBatch(len(payload) + len(headers) + 64)
	if err := b.Add(uint64(time.Now().UnixMicro()), payload, headers); err != nil {
		return nil, err
	}
	conf, err := dp.iggy.SendBatch(ctx, iggy.Name(k.Stream), iggy.Name(k.Topic), k.Partition, b)
	if err != nil {
		return nil, fmt.Errorf("transaction marker to %s/%d: %w", tp.Topic, tp.Partition, err)
	}
	st := dp.data.part(k)
	st.advance(conf.BaseOffset+1, len(payload)+len(headers), 1) // wakes fetches waiting on the partition
	if commit {
		part.st.End(pid, true)
		return nil, nil
	}
	rs := part.st.End(pid, false)
	if rs == nil {
		rs = part.aborted[pid] // a retry: the marker was written before
	} else {
		if part.aborted == nil {
			part.aborted = map[int64][]txn.Range{}
		}
		part.aborted[pid] = rs
	}
	return rs, nil
}

// recoverTxnBatches finds pid's transactional batches written at from or later when the
// partition's state has none recorded (its transaction was restored after a restart), by
// reading the producer headers of the messages from from to the partition's end.
func (dp *Plane) recoverTxnBatches(ctx context.Context, k partKey, part *txnPart, pid int64, from uint64) error {
	if !part.st.Restored(pid) {
		return nil
	}
	for next := from; ; {
		polled, err := dp.iggy.PollMessages(ctx, k.pollRequest(iggy.PollingStrategy{Kind: iggy.PollOffset, Value: next}, firstPollCount))
		if err != nil {
			return fmt.Errorf("reading the transaction's records: %w", err)
		}
		if len(polled.Messages) == 0 {
			polled.Release()
			return nil
		}
		for i := range polled.Messages {
			m := &polled.Messages[i]
			next = max(next, m.Offset+1)
			s := mapping.Stored{Offset: m.Offset, Headers: m.Headers}
			p, ok, err := mapping.ProducerOfMessage(&s)
			if err != nil || !ok || p.ID != pid || !mapping.TransactionalMessage(&s) {
				continue
			}
			part.st.Wrote(pid, m.Offset, uint64(p.Records))
		}
		polled.Release()
	}
}

// Restore is txn.Restorer's: what the transaction log says of pid at start.
func (dp *Plane) Restore(pid int64, open map[txn.TP]uint64, aborted map[txn.TP][]txn.Range) {
	for tp, from := range open {
		dp.txns.part(dp.keyOf(tp)).st.Restore(pid, from, true, nil)
	}
	for tp, rs := range aborted {
		dp.txns.part(dp.keyOf(tp)).st.Restore(pid, 0, false, rs)
	}
}

// lastStable is the partition's last stable offset given its high watermark, and its
// transaction state (nil when no transaction touched it).
func (dp *Plane) lastStable(k partKey, hw uint64) (uint64, *txn.Partition) {
	p := dp.txns.known(k)
	if p == nil {
		return hw, nil
	}
	return p.st.LastStable(hw), &p.st
}
