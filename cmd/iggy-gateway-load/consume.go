package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// Both consumers read every partition from offset 0 up to the high watermark Iggy reports
// after the produce legs, and hand every record to a verifier. Reading up to the watermark
// rather than up to a record count means extra or corrupt records are read and reported too.

// fetchHooks records the latency of each fetch request.
type fetchHooks struct{ requests *latencies }

func (h fetchHooks) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key == int16(kmsg.Fetch) && e2e.Err() == nil {
		h.requests.add(e2e.DurationE2E())
	}
}

// consumeGateway reads the gateway topic back with one franz-go client consuming the
// partitions directly (no group).
func (b *bench) consumeGateway(ctx context.Context, r *legResult) error {
	ends, err := b.highWatermarks(ctx, b.gwTopic)
	if err != nil {
		return err
	}
	return b.consumeFranz(ctx, r, b.gwAddr, b.gwTopic, ends)
}

// consumeKafka reads the Kafka broker's topic back as consumeGateway does, up to the end
// offsets the broker reports.
func (b *bench) consumeKafka(ctx context.Context, r *legResult) error {
	ends, err := b.kafka.endOffsets(ctx, b.o.Partitions)
	if err != nil {
		return err
	}
	return b.consumeFranz(ctx, r, b.kafka.addr, b.kafka.topic, ends)
}

// consumeFranz reads topic at addr from offset 0 up to ends with one franz-go client,
// verifying every record.
func (b *bench) consumeFranz(ctx context.Context, r *legResult, addr, topic string, ends []int64) error {
	offsets := map[int32]kgo.Offset{}
	for p, end := range ends {
		if end > 0 {
			offsets[int32(p)] = kgo.NewOffset().At(0)
		}
	}
	v := newVerifier(b.l, b.o.RecordSize)
	defer func() {
		rep := v.report()
		r.Verify = &rep
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxPartitionBytes(int32(min(b.o.FetchPartitionBytes, 1<<30))),
		kgo.WithHooks(fetchHooks{r.Requests}))
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := checkTopic(ctx, cl, topic, b.o.Partitions); err != nil {
		return err
	}

	next := make([]int64, len(ends))
	left := len(offsets)
	start := time.Now()
	for left > 0 {
		pctx, cancel := context.WithTimeout(ctx, b.o.StallTimeout)
		fetches := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := fetchError(fetches); err != nil {
			return err
		}
		if fetches.NumRecords() == 0 {
			return fmt.Errorf("no records from %s for %s; %s", addr, b.o.StallTimeout, progress(next, ends))
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			p := int(rec.Partition)
			v.check(p, rec.Offset, rec.Value)
			if next[p] < ends[p] && rec.Offset+1 >= ends[p] {
				left--
			}
			next[p] = max(next[p], rec.Offset+1)
		})
	}
	r.Elapsed = time.Since(start)
	rep := v.report()
	r.Records, r.Bytes = int64(rep.Valid), int64(rep.Valid)*int64(b.o.RecordSize)
	return rep.err()
}

// fetchError returns the first error of fetches other than the poll deadline (a stall is
// reported by the caller with more context).
func fetchError(fetches kgo.Fetches) error {
	for _, fe := range fetches.Errors() {
		if errors.Is(fe.Err, context.DeadlineExceeded) {
			continue
		}
		return fmt.Errorf("fetch %s[%d]: %w", fe.Topic, fe.Partition, fe.Err)
	}
	return nil
}

func progress(next, ends []int64) string {
	var got, want int64
	for p := range ends {
		got, want = got+min(next[p], ends[p]), want+ends[p]
	}
	return fmt.Sprintf("read %d of %d offsets", got, want)
}

// consumeDirect reads the direct topic back with Iggy polls, one reader per partition, each
// poll asking for as many records as fit in the consumer's partition byte limit.
func (b *bench) consumeDirect(ctx context.Context, r *legResult) error {
	ends, err := b.highWatermarks(ctx, b.directTopic)
	if err != nil {
		return err
	}
	count := uint32(max(1, b.o.FetchPartitionBytes/b.o.RecordSize))
	v := newVerifier(b.l, b.o.RecordSize)
	defer func() {
		rep := v.report()
		r.Verify = &rep
	}()
	stream, topic := iggy.Name(b.o.IggyStream), iggy.Name(b.directTopic)
	errs := make([]error, len(ends))
	start := time.Now()
	var wg sync.WaitGroup
	for p, end := range ends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := uint32(p)
			req := iggy.PollRequest{
				Consumer: iggy.Consumer{Kind: iggy.ConsumerKindConsumer, ID: iggy.ID(1)},
				Stream:   stream, Topic: topic, Partition: &part, Count: count,
			}
			next, lastProgress := uint64(0), time.Now()
			for int64(next) < end {
				req.Strategy = iggy.PollingStrategy{Kind: iggy.PollOffset, Value: next}
				t0 := time.Now()
				polled, err := b.iggy.PollMessages(ctx, req)
				if err != nil {
					errs[p] = fmt.Errorf("poll partition %d at offset %d: %w", p, next, err)
					return
				}
				r.Requests.add(time.Since(t0))
				if len(polled.Messages) == 0 {
					if time.Since(lastProgress) > b.o.StallTimeout {
						errs[p] = fmt.Errorf("partition %d: no messages at offset %d of %d for %s", p, next, end, b.o.StallTimeout)
						return
					}
					time.Sleep(10 * time.Millisecond)
					continue
				}
				lastProgress = time.Now()
				for i := range polled.Messages {
					m := &polled.Messages[i]
					v.check(p, int64(m.Offset), m.Payload)
					next = max(next, m.Offset+1)
				}
			}
		}()
	}
	wg.Wait()
	r.Elapsed = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	rep := v.report()
	r.Records, r.Bytes = int64(rep.Valid), int64(rep.Valid)*int64(b.o.RecordSize)
	return rep.err()
}
