package broker

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

func (g *gateway) fetchResp(t *testing.T, ctx context.Context, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	t.Helper()
	resp, err := g.b.fetch(ctx, dataConn, req)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	return fetchResponse(resp)
}

// fetchResponse unwraps the Fetch handler's answer without releasing its buffers, so the
// records stay valid for the rest of the test.
func fetchResponse(resp kmsg.Response) *kmsg.FetchResponse {
	if r, ok := resp.(*listener.Response); ok {
		resp = r.Response
	}
	return resp.(*kmsg.FetchResponse)
}

// fetchedRecords decodes a partition's record batches.
func fetchedRecords(t *testing.T, p *kmsg.FetchResponseTopicPartition) []kgo.Record {
	t.Helper()
	return fetchedFrom(t, p, 0)
}

// fetchedFrom decodes a partition's records from offset on, as a client fetching from offset
// does: a batch may begin before it (those from the tail cache do).
func fetchedFrom(t *testing.T, p *kmsg.FetchResponseTopicPartition, offset int64) []kgo.Record {
	t.Helper()
	out, err := testutil.DecodeFetched(p, offset)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Offsets, out-of-range, unknown topics and partitions, at every version.
func TestFetchOffsetsAndErrors(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "f", 2)
	g.produceValues(t, "f", 0, []byte("a"), []byte("b"), []byte("c"))
	for v := int16(4); v <= 12; v++ {
		ctx := ctxT(t)
		check := func(name string, req *kmsg.FetchRequest, wantCode int16, wantHW int64, wantValues ...string) {
			t.Helper()
			resp := g.fetchResp(t, ctx, req)
			p := &resp.Topics[0].Partitions[0]
			if p.ErrorCode != wantCode || p.HighWatermark != wantHW {
				t.Errorf("v%d %s: code %d hw %d, want %d and %d", v, name, p.ErrorCode, p.HighWatermark, wantCode, wantHW)
				return
			}
			if wantCode == 0 && (p.LastStableOffset != wantHW || (v >= 5 && p.LogStartOffset != 0)) {
				t.Errorf("v%d %s: last stable %d log start %d", v, name, p.LastStableOffset, p.LogStartOffset)
			}
			var got []string
			for _, r := range fetchedFrom(t, p, req.Topics[0].Partitions[0].FetchOffset) {
				got = append(got, string(r.Value))
			}
			if fmt.Sprint(got) != fmt.Sprint(wantValues) {
				t.Errorf("v%d %s: values %q, want %q", v, name, got, wantValues)
			}
		}
		check("from 0", testutil.FetchPartitionsReq(v, "f", 0, 0), 0, 3, "a", "b", "c")
		check("from 1", testutil.FetchPartitionsReq(v, "f", 1, 0), 0, 3, "b", "c")
		check("at the end", testutil.FetchPartitionsReq(v, "f", 3, 0), 0, 3)
		check("past the end", testutil.FetchPartitionsReq(v, "f", 4, 0), kerr.OffsetOutOfRange.Code, -1)
		check("negative offset", testutil.FetchPartitionsReq(v, "f", -1, 0), kerr.OffsetOutOfRange.Code, -1)
		check("empty partition", testutil.FetchPartitionsReq(v, "f", 0, 1), 0, 0)
		check("unknown partition", testutil.FetchPartitionsReq(v, "f", 0, 2), kerr.UnknownTopicOrPartition.Code, -1)
		check("unknown topic", testutil.FetchPartitionsReq(v, "missing", 0, 0), kerr.UnknownTopicOrPartition.Code, -1)
		check("invalid topic name", testutil.FetchPartitionsReq(v, "bad name!", 0, 0), kerr.UnknownTopicOrPartition.Code, -1)
		// Over a socket too: every version encodes, and a partition without data has an empty
		// records field, never a null one (librdkafka refuses null).
		c := dialRaw(t, g.addr)
		resp := c.roundTrip(testutil.FetchPartitionsReq(v, "f", 0, 0)).(*kmsg.FetchResponse)
		if len(fetchedRecords(t, &resp.Topics[0].Partitions[0])) != 3 {
			t.Errorf("v%d over the socket: %+v", v, resp)
		}
		for _, offset := range []int64{3, 4} {
			resp = c.roundTrip(testutil.FetchPartitionsReq(v, "f", offset, 0)).(*kmsg.FetchResponse)
			if p := resp.Topics[0].Partitions[0]; p.RecordBatches == nil {
				t.Errorf("v%d at offset %d: null records (code %d)", v, offset, p.ErrorCode)
			}
		}
	}
}

// A long-polling Fetch holds only the memory of what it read while it waits: the rest of its
// reservation goes back to the budget, so that waiting fetches do not keep other requests
// (heartbeats, commits, produces) waiting for memory nobody uses. Here a 32 MiB fetch waits on
// an empty partition of a 40 MiB budget while a 12 MiB produce arrives: the produce is served
// and the fetch answers with its record. Before, the produce waited for the fetch's memory
// until the long poll ended empty.
func TestLongPollGivesBackItsReservation(t *testing.T) {
	read := make(chan struct{}, 1)
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_MAX_REQUEST_MEMORY=40MiB"},
		wrap: func(api iggy.API) iggy.API { return topicReadSignal{api, read} }})
	g.mkTopic("kafka", "lp", 1)
	req := testutil.FetchPartitionsReq(12, "lp", 0, 0)
	req.MaxBytes, req.MaxWaitMillis = 32<<20, 15_000
	req.Topics[0].Partitions[0].PartitionMaxBytes = 32 << 20
	fetcher := dialRaw(t, g.addr)
	fetcher.send(req, 1)
	<-read // the fetch reserved its memory and read the topic: it is about to wait

	value := bytes.Repeat([]byte("v"), 1<<20)
	values := make([][]byte, 12)
	for i := range values {
		values[i] = value
	}
	producer := dialRaw(t, g.addr)
	produce := kmsg.NewPtrProduceResponse()
	produce.Version = 9
	producer.send(testutil.ProducePartitionReq(9, -1, "lp", 0, testutil.ProduceBatch(t, 0, values, nil)), 2)
	if err := produce.ReadFrom(producer.frame()[5:]); err != nil || produce.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("produce: %v %+v", err, produce.Topics)
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 12
	if err := resp.ReadFrom(fetcher.frame()[5:]); err != nil {
		t.Fatal(err)
	}
	if got := fetchedRecords(t, &resp.Topics[0].Partitions[0]); len(got) == 0 {
		t.Fatal("the long poll ended without the records produced while it waited: the produce waited for its memory")
	}
}

// topicReadSignal tells, once, that a topic was read (a Fetch's first read).
type topicReadSignal struct {
	iggy.API
	read chan struct{}
}

func (s topicReadSignal) GetTopic(ctx context.Context, stream, topic iggy.Identifier) (*iggy.Topic, error) {
	t, err := s.API.GetTopic(ctx, stream, topic)
	select {
	case s.read <- struct{}{}:
	default:
	}
	return t, err
}
