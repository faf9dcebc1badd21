package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

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

// franz-go's idempotent producer, pipelining up to 5 requests per partition, while every
// third send is uncertain (half of those landed): every record is stored exactly once, in the
// order produced per partition.
func TestIdempotentFranzGoUnderUncertainSends(t *testing.T) {
	var u *uncertainSends
	g := startGateway(t, gatewayOpts{bridge: true, wrap: func(a iggy.API) iggy.API { u = &uncertainSends{API: a}; return u }})
	const partitions, perPartition = 3, 400
	g.mkTopic("kafka", "kgo-idem", partitions)
	var n atomic.Int64
	u.set(func() (bool, bool) {
		i := n.Add(1)
		return i%3 == 0, i%6 == 0
	})
	// Small batches: many sends, several in flight per partition.
	cl, _ := g.kafka(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0), kgo.ProducerBatchMaxBytes(512),
		kgo.MaxBufferedRecords(perPartition*partitions), kgo.RecordRetries(100))
	ctx := ctxT(t)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for p := range int32(partitions) {
		for i := range perPartition {
			wg.Add(1)
			cl.Produce(ctx, &kgo.Record{Topic: "kgo-idem", Partition: p, Value: []byte(fmt.Sprintf("%d-%d", p, i))}, func(_ *kgo.Record, err error) {
				if err != nil {
					failed.Add(1)
				}
				wg.Done()
			})
		}
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d records failed", failed.Load())
	}
	u.set(nil)
	for p := range int32(partitions) {
		if hw := g.hw(t, "kgo-idem", int(p)); hw != perPartition {
			t.Errorf("partition %d holds %d records, want %d", p, hw, perPartition)
		}
		got := g.consume(t, ctx, "kgo-idem", p, 0, perPartition)
		for i, r := range got[:min(len(got), perPartition)] {
			if want := fmt.Sprintf("%d-%d", p, i); string(r.Value) != want {
				t.Fatalf("partition %d offset %d holds %q, want %q", p, i, r.Value, want)
			}
		}
	}
	t.Logf("%d sends, %d of them uncertain", u.sends.Load(), n.Load()/3)
}
