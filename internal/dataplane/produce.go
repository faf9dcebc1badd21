package dataplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/mapping"
	"github.com/iggygw/iggy-gateway-kafka/internal/producers"
	"github.com/iggygw/iggy-gateway-kafka/internal/tailcache"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

const (
	// maxProduceTimeout bounds timeout_ms, and applies when it is 0 or negative.
	maxProduceTimeout = 30 * time.Second
	// maxParallelSends is how many partitions of one request are sent to Iggy at once.
	maxParallelSends = 8
	// maxSendSize is the largest Iggy batch one send may carry: Iggy drops frames over
	// 64 MiB, and the frame also holds its header and the send prefix.
	maxSendSize = 64<<20 - 4<<10
	// maxPooledBatch: larger Iggy batches are left to the GC rather than kept in the pool.
	maxPooledBatch = 8 << 20
	// sizeHintFactor guesses the Iggy batch size from compressed input; a batch grows anyway.
	sizeHintFactor = 4
)

// producePart is one partition of a Produce request that is ready to be sent.
type producePart struct {
	out   *kmsg.ProduceResponseTopicPartition
	key   partKey
	kafka string // topic name, for cache invalidation and logs
	batch *iggy.Batch
	turn  *sendTurn // its place on its lane (laneOf)
	// producer is the batch's producer when it is checked as idempotent (docs/IDEMPOTENCE.md).
	producer *producers.Batch
	// transactional: the batch belongs to a transaction (txn.go), producer is set.
	transactional bool
	// logAppendTime: the topic's message.timestamp.type is LogAppendTime.
	logAppendTime bool
	topicID       uint32 // the Iggy topic's id and creation time, as resolved for this request
	topicCreated  uint64
	// records are the partition's batches as the producer sent them, for the tail cache
	// (tail.go); nil when their offsets are not consecutive. They alias the request frame:
	// valid until the handler returns, unless the tail cache shares the frame (shared).
	records []byte
	// shared is the request's frame as the tail cache shares it (shareFrame); nil: records
	// are copied into the cache.
	shared *tailcache.Shared
}

// produce writes each partition's records to its Iggy partition with one send, and answers
// with the base offsets Iggy assigned. docs/DATA-PATH.md has the rules.
func (dp *Plane) Produce(ctx context.Context, cc *listener.ConnContext, req *kmsg.ProduceRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(req.Topics))
	for i := range req.Topics {
		rt, t := &req.Topics[i], &resp.Topics[i]
		*t = kmsg.NewProduceResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			p := kmsg.NewProduceResponseTopicPartition()
			p.Partition = rt.Partitions[j].Partition
			p.BaseOffset, p.LogAppendTime, p.LogStartOffset = -1, -1, -1
			t.Partitions[j] = p
		}
	}
	switch {
	case req.Acks != 0 && req.Acks != 1 && req.Acks != -1:
		setProduceError(resp, kerr.InvalidRequiredAcks.Code)
	case req.TransactionID != nil && *req.TransactionID != "" && dp.txns.coordinator() == nil:
		setProduceError(resp, kerr.UnsupportedVersion.Code)
		dp.log.Info("produce: refused transactional producer (no transaction coordinator)", "conn", cc.ID, "client_id", cc.ClientID(), "transactional_id", *req.TransactionID)
	case dp.bridgeOff():
		setProduceError(resp, kerr.NotLeaderForPartition.Code)
	default:
		dp.writeProduce(ctx, cc, req, resp)
	}
	if req.Acks != 0 {
		return resp, nil
	}
	// acks=0: the client reads no answer, so a failure can only be told by closing.
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return nil, fmt.Errorf("produce with acks=0 to %s/%d failed: %w", t.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
	}
	return nil, nil
}

func setProduceError(resp *kmsg.ProduceResponse, code int16) {
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			resp.Topics[i].Partitions[j].ErrorCode = code
		}
	}
}

// writeProduce converts every partition first, so that refusals (transactional batches,
// corrupt or oversized data) are decided before anything is written, then queues each
// partition's send on its lane (laneOf: the connection's writes to that partition), in
// request order, and sends
// the partitions in parallel. Once the sends are queued, the next Produce request of the
// connection may start (listener.Started): its sends queue behind these, so every partition
// still receives the connection's writes in request order.
func (dp *Plane) writeProduce(ctx context.Context, cc *listener.ConnContext, req *kmsg.ProduceRequest, resp *kmsg.ProduceResponse) {
	timeout := time.Duration(req.TimeoutMillis) * time.Millisecond
	if timeout <= 0 || timeout > maxProduceTimeout {
		timeout = maxProduceTimeout
	}
	ready := dp.convertProduce(ctx, timeout, cc, req, resp)
	for i := range ready {
		ready[i].turn = dp.data.queueSend(laneOf(cc, ready[i].key, ready[i].producer))
	}
	defer dp.shareFrame(ctx, ready)()
	listener.Started(ctx)
	dp.sendAll(ctx, timeout, cc, ready)
	stampAppendTime(ready)
}

// convertProduce converts the partitions of req that can be written into Iggy batches, within
// timeout, and answers the others in resp.
func (dp *Plane) convertProduce(ctx context.Context, timeout time.Duration, cc *listener.ConnContext, req *kmsg.ProduceRequest, resp *kmsg.ProduceResponse) []producePart {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// One decompression budget for the whole request: a small frame must not inflate to more
	// than a frame's worth of records, however many partitions it carries. And a bounded
	// number of requests decode at once, so the budgets add up to a bounded amount however
	// many connections produce.
	budget := kbatch.NewBudget(dp.cfg.Limits.MaxFrameSize)
	release, err := dp.data.acquireDecode(ctx)
	if err != nil {
		setProduceError(resp, kafkacode.ForData(err, false))
		dp.log.Warn("produce: no decode slot before the timeout", "conn", cc.ID, "client_id", cc.ClientID(), "err", err)
		return nil
	}
	conv := converterPool.Get().(*converter)
	defer converterPool.Put(conv)
	// Transactional batches come with the request's transactional id (Kafka answers
	// TRANSACTIONAL_ID_AUTHORIZATION_FAILED without one) and need the coordinator.
	conv.txnCode = kerr.UnsupportedVersion.Code
	if dp.txns.coordinator() != nil {
		conv.txnCode = 0
		if req.TransactionID == nil || *req.TransactionID == "" {
			conv.txnCode = kerr.TransactionalIDAuthorizationFailed.Code
		}
	}
	var ready []producePart
	for i := range req.Topics {
		rt, t := &req.Topics[i], &resp.Topics[i]
		r, code := dp.resolveForProduce(ctx, cc, rt)
		var rules topicRules
		if code == 0 {
			rules = dp.rulesOf(ctx, rt.Topic, r.TopicID)
		}
		for j := range rt.Partitions {
			out := &t.Partitions[j]
			switch {
			case code != 0:
				out.ErrorCode = code
				continue
			case out.Partition < 0 || out.Partition >= int32(r.Partitions):
				out.ErrorCode = kerr.UnknownTopicOrPartition.Code
				continue
			case !dp.leads(rt.Topic, out.Partition): // another gateway leads it (plane.go, leads)
				out.ErrorCode = kerr.NotLeaderForPartition.Code
				continue
			case rules.tooLarge(rt.Partitions[j].Records):
				out.ErrorCode = kerr.MessageTooLarge.Code
				out.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("a record batch is larger than the topic's max.message.bytes (%d)", rules.maxBatch))
				dp.logEntry(slog.LevelInfo, logProduceRefused, "produce: partition refused", "conn", cc.ID, "client_id", cc.ClientID(), "topic", rt.Topic,
					"partition", out.Partition, "kafka_error", out.ErrorCode, "max.message.bytes", rules.maxBatch)
				continue
			}
			batch, producer, err := conv.convert(req.Version, rt.Partitions[j].Records, budget, dp.idem.enabled)
			if err != nil {
				out.ErrorCode = produceRefusalCode(err)
				out.ErrorMessage = kmsg.StringPtr(err.Error())
				dp.logEntry(slog.LevelInfo, logProduceRefused, "produce: partition refused", "conn", cc.ID, "client_id", cc.ClientID(), "topic", rt.Topic,
					"partition", out.Partition, "kafka_error", out.ErrorCode, "err", err)
				continue
			}
			p := producePart{out: out, key: partKey{Target: r.Target, Partition: uint32(out.Partition)}, kafka: rt.Topic, batch: batch, producer: producer,
				transactional: conv.transactional, logAppendTime: rules.logAppendTime, topicID: r.TopicID, topicCreated: r.CreatedAt}
			if conv.consecutive && !rules.logAppendTime { // cached batches keep the producer's timestamps
				p.records = rt.Partitions[j].Records
			}
			ready = append(ready, p)
		}
	}
	release()
	return ready
}

// resolveForProduce finds the Iggy topic of a Produce topic. A partition index past the cached
// count re-reads the topic once: partitions may have been added by a native Iggy tool.
func (dp *Plane) resolveForProduce(ctx context.Context, cc *listener.ConnContext, rt *kmsg.ProduceRequestTopic) (topicmap.Resolved, int16) {
	if err := topicmap.ValidateKafkaName(rt.Topic); err != nil {
		return topicmap.Resolved{}, kerr.InvalidTopicException.Code
	}
	r, err := dp.topics.Resolve(ctx, rt.Topic)
	if err == nil {
		for _, p := range rt.Partitions {
			if p.Partition >= int32(r.Partitions) {
				dp.topics.Invalidate(rt.Topic)
				r, err = dp.topics.Resolve(ctx, rt.Topic)
				break
			}
		}
	}
	if err != nil {
		code := kafkacode.ForData(err, false)
		if !kafkacode.IsNotFound(err) {
			dp.logEntry(slog.LevelWarn, logProduceLookup, "produce: topic lookup failed", "conn", cc.ID, "topic", rt.Topic, "kafka_error", code, "err", err)
		}
		return topicmap.Resolved{}, code
	}
	return r, 0
}

// sendAll sends the queued partitions, up to maxParallelSends at once over the Iggy pool,
// each once the connection's earlier sends to its partition are done, and returns when all
// are done.
func (dp *Plane) sendAll(ctx context.Context, timeout time.Duration, cc *listener.ConnContext, parts []producePart) {
	if len(parts) == 1 {
		dp.sendInTurn(ctx, timeout, cc, &parts[0], nil)
		return
	}
	sem := make(chan struct{}, maxParallelSends)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Go(func() { dp.sendInTurn(ctx, timeout, cc, &parts[i], sem) })
	}
	wg.Wait()
}

// sendInTurn waits for p's turn on its lane, sends it (holding a slot of sem, when given) and
// then lets the lane go on.
// A panic is the partition's UNKNOWN_SERVER_ERROR rather than the end of the process: sends
// run on goroutines of their own (sendAll), where nothing else would recover it.
func (dp *Plane) sendInTurn(ctx context.Context, timeout time.Duration, cc *listener.ConnContext, p *producePart, sem chan struct{}) {
	defer p.turn.finish()
	defer func() {
		if v := recover(); v != nil {
			dp.partitionPanic("produce", cc, p.key, v)
			p.out.ErrorCode, p.out.BaseOffset = kerr.UnknownServerError.Code, -1
		}
	}()
	p.turn.wait()
	if sem != nil {
		sem <- struct{}{}
		defer func() { <-sem }()
	}
	dp.send(ctx, timeout, cc, p)
}

// send writes one partition within timeout, counted from its turn, and fills in its answer.
// The wait for its turn is not bounded by the request's timeout: it is bounded by the earlier
// sends' own timeouts, and giving up on the turn would let a later request's write to the
// partition overtake this one.
func (dp *Plane) send(ctx context.Context, timeout time.Duration, cc *listener.ConnContext, p *producePart) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if p.batch != nil {
			putBatch(p.batch)
			p.batch = nil
		}
	}()
	if p.transactional {
		if m := dp.txns.coordinator(); m != nil {
			dp.sendTransactional(ctx, cc, p, m)
			return
		}
		p.out.ErrorCode = kerr.UnsupportedVersion.Code // converted only with a coordinator
		return
	}
	if p.producer != nil {
		dp.sendIdempotent(ctx, cc, p)
		return
	}
	dp.write(ctx, dp.storage(cc), cc, p) // fills in the answer
}

// write sends p's batch to Iggy and fills in its answer: the base offset, or the error code.
func (dp *Plane) write(ctx context.Context, s Storage, cc *listener.ConnContext, p *producePart) (base int64, err error) {
	n, size := p.batch.Len(), p.batch.Size()
	gen := dp.tail.Generation()
	conf, err := s.SendBatch(ctx, iggy.Name(p.key.Stream), iggy.Name(p.key.Topic), p.key.Partition, p.batch)
	putBatch(p.batch)
	p.batch = nil
	if err != nil {
		p.out.ErrorCode = kafkacode.ForData(err, true)
		if p.out.ErrorCode == kerr.UnknownTopicOrPartition.Code {
			dp.topics.Invalidate(p.kafka)
		}
		dp.logEntry(slog.LevelWarn, logProduceSend, "produce: send to Iggy failed", "conn", cc.ID, "client_id", cc.ClientID(), "topic", p.kafka,
			"partition", p.key.Partition, "kafka_error", p.out.ErrorCode, "maybe_written", iggy.MaybeApplied(err), "err", err)
		return -1, err
	}
	p.out.BaseOffset = int64(conf.BaseOffset)
	st := dp.data.part(p.key)
	dp.noteTopic(p.key, st, p.topicID, p.topicCreated, time.Time{}) // before caching: a new topic drops the old one's batches
	dp.cacheWritten(p, gen, conf.BaseOffset)
	st.advance(conf.BaseOffset+uint64(n), size, n)
	dp.observer.Produced(p.kafka, n, size)
	return p.out.BaseOffset, nil
}

// errRefused carries a Kafka code decided by the gateway's own rules rather than by a decoder.
type errRefused struct {
	code int16
	msg  string
}

func (e *errRefused) Error() string { return e.msg }

func produceRefusalCode(err error) int16 {
	var r *errRefused
	if errors.As(err, &r) {
		return r.code
	}
	return kafkacode.ForRecord(err)
}

// converter turns the records of one Produce partition into one Iggy batch. Its scratch space
// is reused across partitions and requests.
type converter struct {
	enc     mapping.Encoder
	batches []kbatch.Batch
	records []kbatch.Records
	// txnCode refuses transactional batches when not 0 (convertProduce sets it per request);
	// transactional says whether the last converted partition's batch is one.
	txnCode       int16
	transactional bool
	// consecutive: the last converted partition's records have offset deltas 0, 1, 2, … in
	// each batch, so the batches hold the offsets Iggy assigns (the tail cache needs that).
	consecutive bool
}

var converterPool = sync.Pool{New: func() any { return new(converter) }}

var batchPool = sync.Pool{New: func() any { return iggy.NewBatch(0) }}

func putBatch(b *iggy.Batch) {
	if b.Size() <= maxPooledBatch {
		batchPool.Put(b)
	}
}

// convert validates and decodes the batches of one partition and maps their records into a
// new Iggy batch (to be released with putBatch). With idempotent, a batch with a producer id
// is returned as the producer to check, and its first message carries the producer headers.
// Nothing is written on error.
func (c *converter) convert(version int16, data []byte, budget *kbatch.Budget, idempotent bool) (*iggy.Batch, *producers.Batch, error) {
	defer c.release()
	var err error
	c.batches, err = kbatch.Split(c.batches[:0], data)
	if err != nil {
		return nil, nil, err
	}
	if len(c.batches) == 0 {
		return nil, nil, fmt.Errorf("%w: no record batch", kbatch.ErrInvalidRecord)
	}
	records, hint := 0, 0
	c.transactional = false
	for i := range c.batches {
		h := &c.batches[i].Header
		if err := h.CheckFromClient(); err != nil {
			return nil, nil, err
		}
		switch {
		case h.Transactional() && c.txnCode != 0:
			return nil, nil, &errRefused{code: c.txnCode, msg: "transactional batch refused"}
		case h.Transactional() && !idempotent:
			// The coordinator's fencing and the duplicate checks rest on the producer state.
			return nil, nil, &errRefused{code: kerr.UnsupportedVersion.Code, msg: "transactional batches need idempotent producers enabled on the gateway"}
		case h.Transactional() && i > 0:
			return nil, nil, fmt.Errorf("%w: a transactional produce carries %d record batches for one partition, not one", kbatch.ErrInvalidRecord, len(c.batches))
		case h.Transactional():
			c.transactional = true
		case h.Codec() == kbatch.CodecZstd && version < 7:
			return nil, nil, &errRefused{code: kerr.UnsupportedCompressionType.Code, msg: "zstd needs Produce v7 or later"}
		}
		records += int(h.NumRecords)
		hint += len(c.batches[i].Raw) + int(h.NumRecords)*mapping.MessageHeadersMin
		if h.Codec() != kbatch.CodecNone {
			hint += sizeHintFactor * len(c.batches[i].Raw)
		}
	}
	prod, err := c.producer(idempotent)
	if err != nil {
		return nil, nil, err
	}
	if c.transactional && prod == nil {
		return nil, nil, fmt.Errorf("%w: a transactional batch without a producer id", kbatch.ErrInvalidRecord)
	}
	var w mapping.Window
	for i := range c.batches {
		recs, err := c.batches[i].Decode(budget)
		if err != nil {
			return nil, nil, err
		}
		c.records = append(c.records, recs)
		w = w.Join(mapping.WindowOf(&c.records[len(c.records)-1]))
	}
	out := batchPool.Get().(*iggy.Batch)
	out.Reset()
	out.Grow(records, hint)
	var rec kbatch.Record
	c.consecutive = true
	for i := range c.records {
		for it, delta := c.records[i].Iter(), int32(0); it.Next(&rec); delta++ {
			c.consecutive = c.consecutive && rec.OffsetDelta == delta
			var m mapping.Message
			if prod != nil && out.Len() == 0 {
				m, err = c.enc.AppendFirst(&rec, w, mapping.Producer{ID: prod.ProducerID, Epoch: prod.Epoch, BaseSequence: prod.FirstSeq, Records: prod.Records,
					Transactional: c.transactional})
			} else {
				m, err = c.enc.Append(&rec, w)
			}
			if err == nil {
				err = out.Add(m.OriginTimestamp, m.Payload, m.Headers)
			}
			c.enc.Reset()
			if err == nil && out.Size() > maxSendSize {
				err = fmt.Errorf("%w: records take more than one Iggy send can carry (%d bytes)", mapping.ErrTooLarge, maxSendSize)
			}
			if err != nil {
				putBatch(out)
				if !errors.Is(err, mapping.ErrTooLarge) {
					err = fmt.Errorf("%w: %v", kbatch.ErrInvalidRecord, err)
				}
				return nil, nil, err
			}
		}
	}
	if prod != nil && out.Len() != int(prod.Records) {
		putBatch(out)
		return nil, nil, fmt.Errorf("%w: batch header counts %d records, it holds %d", kbatch.ErrInvalidRecord, prod.Records, out.Len())
	}
	return out, prod, nil
}

// producer returns the producer of the split batches when they are idempotent: a producer id
// with Produce v3+ comes as exactly one batch, as Kafka's ProduceRequest.validateRecords
// requires (docs/IDEMPOTENCE.md). Its sequence and epoch are checked at its turn.
func (c *converter) producer(idempotent bool) (*producers.Batch, error) {
	if !idempotent {
		return nil, nil
	}
	h := &c.batches[0].Header
	p, ok := mapping.ProducerOf(h)
	if !ok {
		return nil, nil
	}
	if len(c.batches) != 1 {
		return nil, fmt.Errorf("%w: an idempotent produce carries %d record batches for one partition, not one", kbatch.ErrInvalidRecord, len(c.batches))
	}
	return &producers.Batch{ProducerID: p.ID, Epoch: p.Epoch, FirstSeq: p.BaseSequence, Records: p.Records}, nil
}

func (c *converter) release() {
	for i := range c.records {
		c.records[i].Release()
	}
	clear(c.records)
	c.records = c.records[:0]
	clear(c.batches) // do not pin the request's bytes from the pool
	c.batches = c.batches[:0]
}
