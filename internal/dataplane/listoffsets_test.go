package dataplane

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// listed returns the single partition's answer.
func (g *gateway) listed(t *testing.T, req *kmsg.ListOffsetsRequest) kmsg.ListOffsetsResponseTopicPartition {
	t.Helper()
	resp, err := g.b.ListOffsets(ctxT(t), dataConn, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
}

// Records whose Kafka timestamps are older than their append time are found by a scan
// forward from Iggy's append-time answer; native messages use their origin timestamp.
func TestListOffsetsByTimestampScan(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "scan", 1)
	ctx := ctxT(t)
	start := time.Now()
	old := start.Add(-24 * time.Hour).UnixMicro()
	for i, origin := range []int64{old, old + 1000, start.Add(time.Minute).UnixMicro()} {
		if _, err := g.iggy.SendMessages(ctx, iggy.Name("kafka"), iggy.Name("scan"), 0,
			[]iggy.Message{{Payload: []byte{byte(i)}, OriginTimestamp: uint64(origin)}}); err != nil {
			t.Fatal(err)
		}
	}
	// All three were appended after start: Iggy's lookup answers offset 0, whose Kafka
	// timestamp is a day old; the first record at or after start is offset 2.
	p := g.listed(t, testutil.ListOffsetsReq(7, "scan", start.UnixMilli(), 0))
	if p.Offset != 2 || p.Timestamp != start.Add(time.Minute).UnixMilli() {
		t.Errorf("by timestamp: %+v, want offset 2", p)
	}
	p = g.listed(t, testutil.ListOffsetsReq(7, "scan", old/1000+1, 0))
	if p.Offset != 1 {
		t.Errorf("by an old timestamp: %+v, want offset 1", p)
	}
}

func TestListOffsetsBridgeOff(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	if p := g.listed(t, testutil.ListOffsetsReq(7, "t", -1, 0)); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("%+v", p)
	}
}

// A partition named twice is answered with INVALID_REQUEST at each place, as Kafka does,
// whether the topic exists or not; the other partitions are answered as usual.
func TestListOffsetsDuplicatePartitions(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "dups", 2)
	req := testutil.ListOffsetsReq(7, "dups", -1, 0, 1, 0)
	again := testutil.ListOffsetsReq(7, "missing", -1, 3, 3)
	again.Topics = append(again.Topics, testutil.ListOffsetsReq(7, "dups", -1, 1).Topics[0])
	req.Topics = append(req.Topics, again.Topics...)
	resp, err := g.b.ListOffsets(ctxT(t), dataConn, req)
	if err != nil {
		t.Fatal(err)
	}
	var got []int16
	for _, rt := range resp.(*kmsg.ListOffsetsResponse).Topics {
		for _, p := range rt.Partitions {
			got = append(got, p.ErrorCode)
			if p.ErrorCode == kerr.InvalidRequest.Code && (p.Offset != -1 || p.Timestamp != -1) {
				t.Errorf("%s/%d: INVALID_REQUEST with offset %d, timestamp %d", rt.Topic, p.Partition, p.Offset, p.Timestamp)
			}
		}
	}
	inv := kerr.InvalidRequest.Code
	// dups/0 twice; dups/1 once in the first entry and once in the last; missing/3 twice.
	want := []int16{inv, inv, inv, inv, inv, inv}
	if !slices.Equal(got, want) {
		t.Fatalf("error codes %v, want %v", got, want)
	}
	resp, err = g.b.ListOffsets(ctxT(t), dataConn, testutil.ListOffsetsReq(7, "dups", -1, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions {
		if p.ErrorCode != 0 || p.Offset != 0 {
			t.Errorf("dups/%d without duplicates: error %d, offset %d", p.Partition, p.ErrorCode, p.Offset)
		}
	}
}
