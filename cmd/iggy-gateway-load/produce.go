package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
	"github.com/iggygw/iggy-gateway-kafka/internal/mapping"
)

// produceHooks records, for one producer client, the latency of each produce request and the
// record count of each batch per partition.
type produceHooks struct {
	requests  *latencies
	mu        sync.Mutex
	batches   map[int32][]int
	reported  int   // records in the batches reported
	raw, wire int64 // uncompressed and compressed batch bytes
}

func (h *produceHooks) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key == int16(kmsg.Produce) && e2e.Err() == nil {
		h.requests.add(e2e.DurationE2E())
	}
}

// wait waits until batches holding records records were reported, or timeout passes:
// franz-go calls OnProduceBatchWritten from a goroutine per response, possibly after Flush
// returned, so batches of different responses may also be reported out of order.
func (h *produceHooks) wait(records int, timeout time.Duration) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		h.mu.Lock()
		n := h.reported
		h.mu.Unlock()
		if n >= records {
			return
		}
	}
}

func (h *produceHooks) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, partition int32, m kgo.ProduceBatchMetrics) {
	h.mu.Lock()
	h.batches[partition] = append(h.batches[partition], m.NumRecords)
	h.reported += m.NumRecords
	h.raw += int64(m.UncompressedBytes)
	h.wire += int64(m.CompressedBytes)
	h.mu.Unlock()
}

// produceGateway writes every record through the gateway: one franz-go client per producer,
// each record to the partition the layout gives it. The direct leg replays its batch sizes.
func (b *bench) produceGateway(ctx context.Context, r *legResult) error {
	batches, err := b.produceFranz(ctx, r, b.gwAddr, b.gwTopic)
	b.batches = batches
	return err
}

// produceGatewayIdempotenceOff is produceGateway with franz-go's idempotent writes disabled
// (what a non-idempotent client sends: no producer id, no sequence numbers), on a topic of
// its own: compared with produceGateway in the same run it measures what idempotence costs
// the gateway (docs/PERFORMANCE.md).
func (b *bench) produceGatewayIdempotenceOff(ctx context.Context, r *legResult) error {
	_, err := b.produceFranz(ctx, r, b.gwAddr, b.noIdemTopic, kgo.DisableIdempotentWrite())
	return err
}

// produceKafka writes the same records to the Kafka broker, as produceGateway does.
func (b *bench) produceKafka(ctx context.Context, r *legResult) error {
	_, err := b.produceFranz(ctx, r, b.kafka.addr, b.kafka.topic)
	return err
}

// produceFranz writes every record to topic at addr with franz-go (extra options added) and
// returns the batch sizes franz-go cut, per lane.
func (b *bench) produceFranz(ctx context.Context, r *legResult, addr, topic string, extra ...kgo.Opt) ([][]int, error) {
	o := b.o
	hooks := make([]*produceHooks, o.Producers)
	clients := make([]*kgo.Client, o.Producers)
	defer func() {
		for _, cl := range clients {
			if cl != nil {
				cl.Close()
			}
		}
	}()
	for j := range clients {
		hooks[j] = &produceHooks{requests: r.Requests, batches: map[int32][]int{}}
		opts := append(append(o.producerOpts(), kgo.SeedBrokers(addr), kgo.WithHooks(hooks[j])), extra...)
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return nil, err
		}
		clients[j] = cl
		if err := checkTopic(ctx, cl, topic, o.Partitions); err != nil {
			return nil, err
		}
	}

	pool := sync.Pool{New: func() any { v := make([]byte, o.RecordSize); return &v }}
	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	start := time.Now()
	var wg sync.WaitGroup
	for j, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := uint64(j); seq < uint64(o.Records); seq += uint64(o.Producers) {
				vp := pool.Get().(*[]byte)
				v := *vp
				fillValue(v, seq)
				rec := &kgo.Record{Topic: topic, Partition: int32(b.l.partition(seq)), Value: v}
				t0 := time.Now()
				cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
					r.RecordLatency.add(time.Since(t0))
					pool.Put(vp)
					if err != nil && failed.Add(1) == 1 {
						firstErr.Store(&err)
					}
				})
			}
			if err := cl.Flush(ctx); err != nil && failed.Add(1) == 1 {
				firstErr.Store(&err)
			}
		}()
	}
	wg.Wait()
	r.Elapsed = time.Since(start)

	batches := make([][]int, o.Producers*o.Partitions)
	var raw, wire int64
	var nBatches int
	for j, h := range hooks {
		h.wait(int(b.l.produced(j)), 5*time.Second)
		h.mu.Lock()
		for p, sizes := range h.batches {
			batches[j*o.Partitions+int(p)] = sizes
			nBatches += len(sizes)
		}
		raw, wire = raw+h.raw, wire+h.wire
		h.mu.Unlock()
	}
	if raw > 0 {
		r.WireRatio = float64(wire) / float64(raw)
	}
	if n := failed.Load(); n > 0 {
		return batches, fmt.Errorf("%d records not acknowledged, first: %w", n, *firstErr.Load())
	}
	r.Records, r.Bytes = int64(o.Records), int64(o.Records)*int64(o.RecordSize)
	if nBatches > 0 {
		r.MeanBatch = float64(o.Records) / float64(nBatches)
	}
	return batches, nil
}

// checkTopic asks the gateway for topic's metadata, so that the measured time does not include
// discovering it, and checks the gateway sees all its partitions.
func checkTopic(ctx context.Context, cl *kgo.Client, topic string, partitions int) error {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("metadata for %q: %w", topic, err)
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("metadata for %q: %d topics in the answer", topic, len(resp.Topics))
	}
	t := resp.Topics[0]
	if t.ErrorCode != 0 || len(t.Partitions) != partitions {
		return fmt.Errorf("metadata for %q: error code %d, %d partitions (want %d)", topic, t.ErrorCode, len(t.Partitions), partitions)
	}
	return nil
}

// produceDirect writes the same records straight to Iggy: one writer per producer and
// partition (the records that producer sent to that partition, in order), each with one send
// in flight, all sharing one pooled client as the gateway does. Each send carries as many
// records as the matching franz-go batch did.
func (b *bench) produceDirect(ctx context.Context, r *legResult) error {
	o := b.o
	headers, err := gatewayHeaders()
	if err != nil {
		return err
	}
	stream, topic := iggy.Name(o.IggyStream), iggy.Name(b.directTopic)
	var nSends atomic.Int64
	errs := make([]error, o.Producers*o.Partitions)
	start := time.Now()
	var wg sync.WaitGroup
	for j := range o.Producers {
		for p := range o.Partitions {
			lane := j*o.Partitions + p
			wg.Add(1)
			go func() {
				defer wg.Done()
				seqs := b.l.lane(j, p)
				plan := batchPlan(b.laneBatches(lane), len(seqs), b.fallbackBatch())
				batch := iggy.NewBatch(0)
				value := make([]byte, o.RecordSize)
				for _, n := range plan {
					batch.Reset()
					batch.Grow(n, n*(o.RecordSize+len(headers)))
					origin := uint64(time.Now().UnixMilli()) * 1000
					for _, seq := range seqs[:n] {
						fillValue(value, seq)
						if err := batch.Add(origin, value, headers); err != nil {
							errs[lane] = err
							return
						}
					}
					seqs = seqs[n:]
					t0 := time.Now()
					if _, err := b.iggy.SendBatch(ctx, stream, topic, uint32(p), batch); err != nil {
						errs[lane] = fmt.Errorf("send to partition %d: %w", p, err)
						return
					}
					r.Requests.add(time.Since(t0))
					nSends.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	r.Elapsed = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r.Records, r.Bytes = int64(o.Records), int64(o.Records)*int64(o.RecordSize)
	if n := nSends.Load(); n > 0 {
		r.MeanBatch = float64(o.Records) / float64(n)
	}
	return nil
}

// gatewayHeaders returns the user headers the gateway stores with a record that has no key
// and no headers (the mapping version marker), so that both paths store identical messages.
func gatewayHeaders() ([]byte, error) {
	now := time.Now().UnixMilli()
	var enc mapping.Encoder
	m, err := enc.Append(&kbatch.Record{Timestamp: now, Value: []byte{1}}, mapping.NewWindow(now))
	if err != nil {
		return nil, err
	}
	return m.Headers, nil
}

// laneBatches returns the batch sizes franz-go cut for lane, nil without a gateway leg or
// with --direct-batch-records.
func (b *bench) laneBatches(lane int) []int {
	if b.o.DirectBatchRecords > 0 || lane >= len(b.batches) {
		return nil
	}
	return b.batches[lane]
}

// fallbackBatch is the records per send when there are no recorded batches to replay.
func (b *bench) fallbackBatch() int {
	if b.o.DirectBatchRecords > 0 {
		return b.o.DirectBatchRecords
	}
	return max(1, b.o.BatchBytes/b.o.RecordSize)
}

// batchPlan returns the send sizes for a lane of total records: the recorded sizes as long as
// they last (cut at total), then fallback-sized sends.
func batchPlan(recorded []int, total, fallback int) []int {
	var plan []int
	for _, n := range recorded {
		if total == 0 {
			break
		}
		n = min(n, total)
		plan = append(plan, n)
		total -= n
	}
	for total > 0 {
		n := min(fallback, total)
		plan = append(plan, n)
		total -= n
	}
	return plan
}
