package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// The rate-limited legs ("latency gateway", "latency direct", "latency kafka") produce at a
// fixed rate (--rate, or half of the lowest produce rate measured in the same round, so every
// system gets the same load) for --latency-duration, while one consumer tails the same
// partitions from their current end. Per record they measure
//
//   - produce latency: from the record's due time to its acknowledgement;
//   - end-to-end latency: from its due time to the consumer receiving it.
//
// Both count from the due time (the pacer's schedule), so a producer or consumer that falls
// behind shows up as latency. Records of the warm-up (pacer.warmup) are verified but not
// measured. One producer writes record k to partition k mod the partition count.

// pacedLayout is the layout of a rate-limited leg of records records.
func (b *bench) pacedLayout(records int) layout {
	return layout{records: records, producers: 1, partitions: b.o.Partitions}
}

// pacedRate returns the records/s of this round's rate-limited legs: --rate, or half of the
// lowest rate of the round's produce legs that succeeded.
func (b *bench) pacedRate(round []*legResult) (float64, error) {
	if b.o.Rate > 0 {
		return b.o.Rate, nil
	}
	lowest := 0.0
	for _, l := range round {
		if !strings.HasPrefix(l.Name, "produce ") || l.Err != nil {
			continue
		}
		if r, _ := l.rate(); r > 0 && (lowest == 0 || r < lowest) {
			lowest = r
		}
	}
	if lowest == 0 {
		return 0, errors.New("no produce leg of this round measured a peak rate: give --rate")
	}
	return lowest / 2, nil
}

// newPacer schedules the round's rate-limited leg starting now.
func (b *bench) newPacer() pacer {
	n := max(1, int(b.paceRate*b.o.LatencyDuration.Seconds()))
	return pacer{start: time.Now(), rate: b.paceRate, records: n}
}

// pacedConsumer verifies what the consumer of a rate-limited leg receives and records its
// end-to-end latency.
type pacedConsumer struct {
	p      pacer
	warm   int
	v      *verifier
	e2e    *latencies
	got    atomic.Int64
	doneCh chan struct{}
	once   sync.Once
}

func newPacedConsumer(p pacer, l layout, size int, e2e *latencies) *pacedConsumer {
	return &pacedConsumer{p: p, warm: p.warmup(), v: newVerifier(l, size), e2e: e2e, doneCh: make(chan struct{})}
}

// receive handles one consumed record.
func (c *pacedConsumer) receive(partition int, offset int64, value []byte) {
	now := time.Now()
	c.v.check(partition, offset, value)
	if len(value) >= valueHeaderSize {
		if seq := binary.BigEndian.Uint64(value); seq >= uint64(c.warm) && seq < uint64(c.p.records) {
			c.e2e.add(now.Sub(c.p.due(int(seq))))
		}
	}
	if c.got.Add(1) == int64(c.p.records) {
		c.once.Do(func() { close(c.doneCh) })
	}
}

// finish fills in r from what the consumer verified.
func (c *pacedConsumer) finish(r *legResult, size int) error {
	r.Elapsed = time.Since(c.p.start)
	rep := c.v.report()
	r.Verify = &rep
	r.Records, r.Bytes = int64(rep.Valid), int64(rep.Valid)*int64(size)
	return rep.err()
}

// latencyGateway runs the rate-limited leg through the gateway.
func (b *bench) latencyGateway(ctx context.Context, r *legResult) error {
	ends, err := b.highWatermarks(ctx, b.gwTopic)
	if err != nil {
		return err
	}
	return b.latencyFranz(ctx, r, b.gwAddr, b.gwTopic, ends)
}

// latencyKafka runs the rate-limited leg against the Kafka broker.
func (b *bench) latencyKafka(ctx context.Context, r *legResult) error {
	ends, err := b.kafka.endOffsets(ctx, b.o.Partitions)
	if err != nil {
		return err
	}
	return b.latencyFranz(ctx, r, b.kafka.addr, b.kafka.topic, ends)
}

// latencyFranz produces to topic at addr with one franz-go client at the round's rate while
// another consumes the partitions from ends (their offsets before the leg).
func (b *bench) latencyFranz(ctx context.Context, r *legResult, addr, topic string, ends []int64) error {
	o := b.o
	offsets := map[int32]kgo.Offset{}
	for p, end := range ends {
		offsets[int32(p)] = kgo.NewOffset().At(end)
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxPartitionBytes(int32(min(o.FetchPartitionBytes, 1<<30))))
	if err != nil {
		return err
	}
	defer consumer.Close()
	producer, err := kgo.NewClient(append(o.producerOpts(), kgo.SeedBrokers(addr))...)
	if err != nil {
		return err
	}
	defer producer.Close()
	for _, cl := range []*kgo.Client{consumer, producer} {
		if err := checkTopic(ctx, cl, topic, o.Partitions); err != nil {
			return err
		}
	}
	p := b.newPacer()
	l := b.pacedLayout(p.records)
	c := newPacedConsumer(p, l, o.RecordSize, r.EndToEnd)
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	consumed := make(chan error, 1)
	go func() { consumed <- consumeUntil(cctx, consumer, c, o.StallTimeout) }()

	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	pool := sync.Pool{New: func() any { v := make([]byte, o.RecordSize); return &v }}
	for seq := 0; seq < p.records; {
		if !p.wait(seq, ctx.Done()) {
			break
		}
		for n := max(p.dueBy(time.Now()), seq+1); seq < n; seq++ {
			vp := pool.Get().(*[]byte)
			fillValue(*vp, uint64(seq))
			rec := &kgo.Record{Topic: topic, Partition: int32(l.partition(uint64(seq))), Value: *vp}
			due, measured := p.due(seq), seq >= c.warm
			producer.Produce(ctx, rec, func(_ *kgo.Record, err error) {
				if err == nil && measured {
					r.Requests.add(time.Since(due))
				}
				pool.Put(vp)
				if err != nil && failed.Add(1) == 1 {
					firstErr.Store(&err)
				}
			})
		}
	}
	if err := producer.Flush(ctx); err != nil && failed.Add(1) == 1 {
		firstErr.Store(&err)
	}
	if n := failed.Load(); n > 0 {
		stop()
		<-consumed
		return fmt.Errorf("%d records not acknowledged, first: %w", n, *firstErr.Load())
	}
	return errors.Join(<-consumed, c.finish(r, o.RecordSize))
}

// consumeUntil polls cl until c has received every record of its leg, ctx ends, or nothing
// arrives for stall.
func consumeUntil(ctx context.Context, cl *kgo.Client, c *pacedConsumer, stall time.Duration) error {
	for {
		select {
		case <-c.doneCh:
			return nil
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, stall)
		fetches := cl.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fetchError(fetches); err != nil {
			return err
		}
		if fetches.NumRecords() == 0 {
			return fmt.Errorf("no records for %s; received %d of %d", stall, c.got.Load(), c.p.records)
		}
		fetches.EachRecord(func(rec *kgo.Record) { c.receive(int(rec.Partition), rec.Offset, rec.Value) })
	}
}

// directPollInterval is how long a direct reader waits after an empty poll: Iggy has no long
// poll, so a tailing client polls; 1 ms keeps its share of the end-to-end latency small.
const directPollInterval = time.Millisecond

// latencyDirect runs the rate-limited leg straight against Iggy: per partition, one writer
// sends the records due so far in one batch (one send in flight, as the gateway sends a
// partition's batches in order), and one reader polls from the partition's end.
func (b *bench) latencyDirect(ctx context.Context, r *legResult) error {
	o := b.o
	ends, err := b.highWatermarks(ctx, b.directTopic)
	if err != nil {
		return err
	}
	headers, err := gatewayHeaders()
	if err != nil {
		return err
	}
	p := b.newPacer()
	l := b.pacedLayout(p.records)
	c := newPacedConsumer(p, l, o.RecordSize, r.EndToEnd)
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make([]error, 2*o.Partitions)
	var wg sync.WaitGroup
	for part := range o.Partitions {
		wg.Add(2)
		go func() {
			defer wg.Done()
			errs[part] = b.pacedDirectWriter(ctx, r, c, part, headers)
		}()
		go func() {
			defer wg.Done()
			errs[o.Partitions+part] = b.pacedDirectReader(cctx, c, part, uint64(ends[part]))
		}()
	}
	// Readers stop when every record arrived, or when a writer failed (nothing more comes).
	go func() {
		select {
		case <-c.doneCh:
		case <-cctx.Done():
		}
		stop()
	}()
	wg.Wait()
	return errors.Join(errors.Join(errs...), c.finish(r, o.RecordSize))
}

// pacedDirectWriter sends the records of partition part as they fall due.
func (b *bench) pacedDirectWriter(ctx context.Context, r *legResult, c *pacedConsumer, part int, headers []byte) error {
	o := b.o
	seqs := c.v.l.lane(0, part)
	batch := iggy.NewBatch(0)
	value := make([]byte, o.RecordSize)
	for len(seqs) > 0 {
		if !c.p.wait(int(seqs[0]), ctx.Done()) {
			return ctx.Err()
		}
		now := time.Now()
		n := 1
		for n < len(seqs) && !c.p.due(int(seqs[n])).After(now) {
			n++
		}
		batch.Reset()
		batch.Grow(n, n*(o.RecordSize+len(headers)))
		origin := uint64(now.UnixMilli()) * 1000
		for _, seq := range seqs[:n] {
			fillValue(value, seq)
			if err := batch.Add(origin, value, headers); err != nil {
				return err
			}
		}
		if _, err := b.iggy.SendBatch(ctx, iggy.Name(o.IggyStream), iggy.Name(b.directTopic), uint32(part), batch); err != nil {
			return fmt.Errorf("send to partition %d: %w", part, err)
		}
		acked := time.Now()
		for _, seq := range seqs[:n] {
			if int(seq) >= c.warm {
				r.Requests.add(acked.Sub(c.p.due(int(seq))))
			}
		}
		seqs = seqs[n:]
	}
	return nil
}

// pacedDirectReader polls partition part from offset next until ctx ends (every record of
// the leg arrived), failing when nothing arrives for the stall timeout.
func (b *bench) pacedDirectReader(ctx context.Context, c *pacedConsumer, part int, next uint64) error {
	p32 := uint32(part)
	req := iggy.PollRequest{
		Consumer: iggy.Consumer{Kind: iggy.ConsumerKindConsumer, ID: iggy.ID(1)},
		Stream:   iggy.Name(b.o.IggyStream), Topic: iggy.Name(b.directTopic), Partition: &p32,
		Count: uint32(max(1, b.o.FetchPartitionBytes/b.o.RecordSize)),
	}
	lastProgress := time.Now()
	for ctx.Err() == nil {
		req.Strategy = iggy.PollingStrategy{Kind: iggy.PollOffset, Value: next}
		polled, err := b.iggy.PollMessages(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("poll partition %d at offset %d: %w", part, next, err)
		}
		if len(polled.Messages) == 0 {
			if time.Since(lastProgress) > b.o.StallTimeout {
				return fmt.Errorf("partition %d: no messages at offset %d for %s", part, next, b.o.StallTimeout)
			}
			select {
			case <-ctx.Done():
			case <-time.After(directPollInterval):
			}
			continue
		}
		lastProgress = time.Now()
		for i := range polled.Messages {
			m := &polled.Messages[i]
			c.receive(part, int64(m.Offset), m.Payload)
			next = max(next, m.Offset+1)
		}
	}
	return nil
}
