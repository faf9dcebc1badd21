package dataplane

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// panickingStorage panics on reads and writes of partition 1 while armed, as a bug in the
// storage layer or below it would.
type panickingStorage struct {
	iggy.API
	armed atomic.Bool
}

func (p *panickingStorage) PollMessages(ctx context.Context, req iggy.PollRequest) (*iggy.Polled, error) {
	if p.armed.Load() && req.Partition != nil && *req.Partition == 1 && req.Strategy.Kind == iggy.PollOffset {
		panic("injected poll panic")
	}
	return p.API.PollMessages(ctx, req)
}

func (p *panickingStorage) SendBatch(ctx context.Context, stream, topic iggy.Identifier, partition uint32, b *iggy.Batch) (iggy.SendConfirmation, error) {
	if p.armed.Load() && partition == 1 {
		panic("injected send panic")
	}
	return p.API.SendBatch(ctx, stream, topic, partition, b)
}

// A panic while reading or writing one partition, on the handler's goroutine or a fan-out
// one, answers that partition UNKNOWN_SERVER_ERROR; the others are served, and so are later
// requests.
func TestFanOutPanicsAnswerThePartition(t *testing.T) {
	ps := &panickingStorage{}
	// The tail cache is off: the records written below would be fetched from it, not polled.
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=0"},
		wrap: func(a iggy.API) iggy.API { ps.API = a; return ps }})
	g.mkTopic("kafka", "p", 2)
	for p := range int32(2) {
		g.produceValues(t, "p", p, []byte("before"))
	}
	ps.armed.Store(true)

	for _, tt := range []struct {
		name     string
		maxBytes int32 // of the request: partitions that do not fit together are read in turn
	}{{"parallel", 50 << 20}, {"sequential", 1 << 20}} {
		t.Run("fetch "+tt.name, func(t *testing.T) {
			req := testutil.FetchPartitionsReq(12, "p", 0, 0, 1)
			req.MaxBytes = tt.maxBytes
			resp := g.fetchResp(t, ctxT(t), req)
			parts := resp.Topics[0].Partitions
			if parts[0].ErrorCode != 0 || len(fetchedRecords(t, &parts[0])) != 1 {
				t.Errorf("partition 0: code %d, want its record", parts[0].ErrorCode)
			}
			if parts[1].ErrorCode != kerr.UnknownServerError.Code || len(parts[1].RecordBatches) != 0 {
				t.Errorf("partition 1: code %d with %d bytes, want UNKNOWN_SERVER_ERROR", parts[1].ErrorCode, len(parts[1].RecordBatches))
			}
		})
	}

	t.Run("produce", func(t *testing.T) {
		req := testutil.ProducePartitionReq(9, -1, "p", 0, testutil.ProduceBatch(t, 0, [][]byte{[]byte("after")}, nil))
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = 1, testutil.ProduceBatch(t, 0, [][]byte{[]byte("after")}, nil)
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
		resp, err := g.b.Produce(ctxT(t), dataConn, req)
		if err != nil {
			t.Fatal(err)
		}
		parts := resp.(*kmsg.ProduceResponse).Topics[0].Partitions
		if parts[0].ErrorCode != 0 || parts[0].BaseOffset != 1 {
			t.Errorf("partition 0: code %d base %d, want written at 1", parts[0].ErrorCode, parts[0].BaseOffset)
		}
		if parts[1].ErrorCode != kerr.UnknownServerError.Code || parts[1].BaseOffset != -1 {
			t.Errorf("partition 1: code %d base %d, want UNKNOWN_SERVER_ERROR", parts[1].ErrorCode, parts[1].BaseOffset)
		}
		// The lane to partition 1 was let go: the next write to it is not stuck behind.
		ps.armed.Store(false)
		if code, base := g.produceCode(t, testutil.ProducePartitionReq(9, -1, "p", 1, testutil.ProduceBatch(t, 0, [][]byte{[]byte("later")}, nil))); code != 0 || base != 1 {
			t.Errorf("later write to partition 1: code %d base %d, want written at 1", code, base)
		}
	})
}
