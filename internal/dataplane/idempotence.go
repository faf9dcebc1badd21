package dataplane

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
	"github.com/iggygw/iggy-gateway-kafka/internal/producers"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// Idempotent producers on the Produce path (docs/IDEMPOTENCE.md): each partition's producer
// state (internal/producers) is rebuilt from the partition's tail before its first idempotent
// write, every idempotent batch is checked against it at its turn on its lane, and a write
// whose outcome is uncertain is looked up in the partition before it is answered.

const (
	// tailChunkBytes bounds the bytes one poll of a rebuild or read-back asks Iggy for.
	tailChunkBytes = 8 << 20
	// readBackTimeout bounds finding out whether an uncertain write landed. It is not the
	// request's timeout: that one may be what made the write uncertain.
	readBackTimeout = 10 * time.Second
	// readBackSettle is waited before reading back: a send whose connection dropped may still
	// be applied by the server a moment later, and must be seen by the read-back.
	readBackSettle = 200 * time.Millisecond
)

// producerStates is the idempotent-producer state of the partitions this gateway writes. The
// zero value is off (enabled false): Produce then writes every batch as sent.
type producerStates struct {
	enabled bool
	limits  producers.Limits // Usage is shared by every partition
	tail    int              // messages read by a rebuild

	mu    sync.Mutex
	parts map[partKey]*producerPart
}

func newProducerStates(enabled bool, expiry time.Duration, tail int) producerStates {
	return producerStates{
		enabled: enabled,
		limits:  producers.Limits{Expiry: expiry, Usage: new(producers.Usage)},
		tail:    tail,
	}
}

// producerPart is one partition's producer state.
type producerPart struct {
	state *producers.Partition
	// generation is the placement's generation the state was made in: only the partition's
	// leader keeps it current, and leadership may have moved away and back since a change
	// (placement.Generation), so a newer generation starts afresh from Iggy.
	generation uint64

	mu      sync.Mutex // held while rebuilding
	rebuilt bool

	unsureMu sync.Mutex
	unsure   map[int64]*uncertainWrite // by producer id: writes whose outcome is still unknown
}

// uncertainWrite is a batch whose Iggy send may or may not have landed.
type uncertainWrite struct {
	mu      sync.Mutex // one read-back at a time
	pending *producers.Pending
	from    uint64 // the partition's end, as known, before the send
}

// part returns the state of k in placement generation gen, creating it (not yet rebuilt) on
// first use in that generation. Writes still in flight keep the state they started with.
func (s *producerStates) part(k partKey, gen uint64) *producerPart {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pp := s.parts[k]; pp != nil && pp.generation == gen {
		return pp
	}
	if s.parts == nil {
		s.parts = make(map[partKey]*producerPart)
	}
	pp := &producerPart{state: producers.NewPartition(s.limits), generation: gen}
	s.parts[k] = pp
	return pp
}

// dropTopic forgets the producer state of a deleted topic's partitions: a topic created under
// its name starts afresh.
func (s *producerStates) dropTopic(t topicmap.Target) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.parts {
		if k.Target == t {
			delete(s.parts, k)
		}
	}
}

func (pp *producerPart) uncertain(id int64) *uncertainWrite {
	pp.unsureMu.Lock()
	defer pp.unsureMu.Unlock()
	return pp.unsure[id]
}

func (pp *producerPart) setUncertain(id int64, u *uncertainWrite) {
	pp.unsureMu.Lock()
	defer pp.unsureMu.Unlock()
	if pp.unsure == nil {
		pp.unsure = make(map[int64]*uncertainWrite)
	}
	pp.unsure[id] = u
}

func (pp *producerPart) clearUncertain(id int64, u *uncertainWrite) {
	pp.unsureMu.Lock()
	defer pp.unsureMu.Unlock()
	if pp.unsure[id] == u {
		delete(pp.unsure, id)
	}
}

// ProducerUsage counts the producers the partitions remember and their memory, for /metrics.
func (dp *Plane) ProducerUsage() *producers.Usage { return dp.idem.limits.Usage }

// sendIdempotent writes p, an idempotent batch, at its turn: Check decides whether it is
// written, answered as a duplicate of an earlier write, refused, or has to wait for the
// producer's write in flight.
func (dp *Plane) sendIdempotent(ctx context.Context, cc *listener.ConnContext, p *producePart) {
	s := dp.storage(cc)
	pp, err := dp.rebuiltPart(ctx, s, p.key)
	if err != nil {
		p.out.ErrorCode = kafkacode.ForData(err, false)
		dp.log.Warn("produce: rebuilding the partition's producer state failed", "conn", cc.ID, "topic", p.kafka,
			"partition", p.key.Partition, "kafka_error", p.out.ErrorCode, "err", err)
		return
	}
	for {
		d := pp.state.Check(*p.producer)
		switch d.Outcome {
		case producers.Append:
			dp.appendIdempotent(ctx, s, cc, p, pp, d.Pending)
			return
		case producers.Duplicate:
			p.out.BaseOffset = d.BaseOffset
			return
		case producers.Refuse:
			p.out.ErrorCode = d.Err.Code
			dp.logEntry(slog.LevelInfo, logIdempotentRefused, "produce: idempotent batch refused", "conn", cc.ID, "client_id", cc.ClientID(), "topic", p.kafka,
				"partition", p.key.Partition, "producer_id", p.producer.ProducerID, "epoch", p.producer.Epoch,
				"sequence", p.producer.FirstSeq, "records", p.producer.Records, "kafka_error", d.Err.Code)
			return
		case producers.Wait:
			if u := pp.uncertain(p.producer.ProducerID); u != nil {
				// An earlier write of the producer was left uncertain: find out first.
				if err := dp.resolveUncertain(ctx, s, p.key, pp, u); err != nil {
					p.out.ErrorCode = kerr.RequestTimedOut.Code
					return
				}
				continue
			}
			select {
			case <-d.Ready:
			case <-ctx.Done():
				p.out.ErrorCode = kerr.RequestTimedOut.Code
				return
			}
		}
	}
}

// appendIdempotent writes p and settles pending with the outcome. When the outcome is
// uncertain it reads the partition back before answering, so the batch is neither lost nor,
// on the client's retry, written twice.
func (dp *Plane) appendIdempotent(ctx context.Context, s Storage, cc *listener.ConnContext, p *producePart, pp *producerPart, pending *producers.Pending) {
	st := dp.data.part(p.key)
	from := st.highWatermark()
	base, err := dp.write(ctx, s, cc, p)
	switch {
	case err == nil:
		pending.Commit(base)
		return
	case !iggy.MaybeApplied(err):
		pending.Abort()
		return
	}
	pending.MarkUncertain()
	u := &uncertainWrite{pending: pending, from: from}
	pp.setUncertain(p.producer.ProducerID, u)
	if rerr := dp.resolveUncertain(ctx, s, p.key, pp, u); rerr != nil {
		// Still unknown: the producer's next batches on this partition wait until a later
		// read-back tells (docs/IDEMPOTENCE.md §5).
		return
	}
	if off, found, _ := u.pending.Result(); found {
		p.out.ErrorCode, p.out.BaseOffset = 0, off
		st.advance(uint64(off)+uint64(p.producer.Records), 0, 0)
		dp.log.Info("produce: uncertain write found in the partition; answered as written", "conn", cc.ID, "topic", p.kafka,
			"partition", p.key.Partition, "producer_id", p.producer.ProducerID, "sequence", p.producer.FirstSeq, "offset", off)
	}
}

// resolveUncertain reads the partition back from u.from and commits u's batch at the offset
// where it is found, or aborts it when it is not there. An error leaves it uncertain.
func (dp *Plane) resolveUncertain(ctx context.Context, s Storage, k partKey, pp *producerPart, u *uncertainWrite) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, _, done := u.pending.Result(); done {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readBackTimeout)
	defer cancel()
	select {
	case <-time.After(readBackSettle):
	case <-ctx.Done():
		return ctx.Err()
	}
	batch := u.pending.Batch()
	var base int64
	found := false
	// Without a known end before the send (the partition's state was dropped), read no more
	// than a rebuild would.
	last := 0
	if u.from == 0 {
		last = max(dp.idem.tail, maxPollCount)
	}
	err := dp.scanTail(ctx, s, k, u.from, last, func(msgs []iggy.PolledMessage) bool {
		base, found = producers.FindBatch(msgs, batch)
		return !found
	})
	if err != nil {
		dp.log.Warn("produce: reading back an uncertain write failed; the producer waits on this partition", "iggy_stream", k.Stream,
			"iggy_topic", k.Topic, "partition", k.Partition, "producer_id", batch.ProducerID, "sequence", batch.FirstSeq, "err", err)
		return err
	}
	if found {
		u.pending.Commit(base)
	} else {
		u.pending.Abort()
	}
	pp.clearUncertain(batch.ProducerID, u)
	return nil
}

// rebuiltPart returns k's producer state, rebuilt from the partition's last messages when
// this is its first idempotent write since the gateway started or the placement changed.
func (dp *Plane) rebuiltPart(ctx context.Context, s Storage, k partKey) (*producerPart, error) {
	pp := dp.idem.part(k, placement.Generation(dp.placement))
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.rebuilt {
		return pp, nil
	}
	var corrupt error
	err := dp.scanTail(ctx, s, k, 0, dp.idem.tail, func(msgs []iggy.PolledMessage) bool {
		if err := pp.state.Rebuild(msgs); err != nil && corrupt == nil {
			corrupt = err
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if corrupt != nil {
		dp.log.Error("produce: producer state rebuilt without messages whose producer headers are corrupt", "iggy_stream", k.Stream,
			"iggy_topic", k.Topic, "partition", k.Partition, "err", corrupt)
	}
	pp.rebuilt = true
	return pp, nil
}

// scanTail reads partition k up to its current end, in order, in polls of bounded size, and
// hands each poll's messages to visit until it returns false. It starts at from, or, when
// last > 0, at the last messages before the end if that is later. The messages are valid only
// during visit.
func (dp *Plane) scanTail(ctx context.Context, s Storage, k partKey, from uint64, last int, visit func([]iggy.PolledMessage) bool) error {
	topic, err := s.GetTopic(ctx, iggy.Name(k.Stream), iggy.Name(k.Topic))
	if err != nil {
		return err
	}
	ip, ok := PartitionOf(topic, int32(k.Partition))
	if !ok {
		return &iggy.Error{Code: iggy.CodePartitionNotFound, Op: "get_topic"}
	}
	dp.data.part(k).observe(ip)
	end := HighWatermark(ip)
	if last > 0 && end > uint64(last) {
		from = max(from, end-uint64(last))
	}
	chunk := uint64(maxPollCount)
	if size := storedSize(ip); size > 0 {
		chunk = min(chunk, max(1, tailChunkBytes/uint64(size)))
	}
	for from < end {
		polled, err := pollFitting(ctx, s, k, nil, iggy.PollingStrategy{Kind: iggy.PollOffset, Value: from}, uint32(min(chunk, end-from)))
		if err != nil {
			return err
		}
		if len(polled.Messages) == 0 {
			polled.Release()
			return nil
		}
		next := polled.Messages[len(polled.Messages)-1].Offset + 1
		more := visit(polled.Messages)
		polled.Release()
		if !more || next <= from {
			return nil
		}
		from = next
	}
	return nil
}
