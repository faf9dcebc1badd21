package broker

import (
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listed returns the single partition's answer.
func (g *gateway) listed(t *testing.T, req *kmsg.ListOffsetsRequest) kmsg.ListOffsetsResponseTopicPartition {
	t.Helper()
	resp, err := g.b.listOffsets(ctxT(t), dataConn, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
}

// Earliest, latest, max timestamp and by timestamp, at every version, on an empty and a
// filled partition; the Kafka timestamp decides, not Iggy's append time.
func TestListOffsets(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "lo", 2)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	cl, _ := g.kafka(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for i := range 3 {
		recs = append(recs, &kgo.Record{Topic: "lo", Value: []byte{'a' + byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	if err := cl.ProduceSync(ctxT(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) int64 { return base.Add(d).UnixMilli() }
	tests := []struct {
		name               string
		partition          int32
		timestamp          int64
		minVersion         int16
		wantOffset, wantTs int64
	}{
		{"latest", 0, -1, 1, 3, -1},
		{"earliest", 0, -2, 1, 0, -1},
		{"max timestamp", 0, -3, 7, 2, ms(2 * time.Second)},
		{"before every record", 0, ms(-time.Hour), 1, 0, ms(0)},
		{"exactly the second", 0, ms(time.Second), 1, 1, ms(time.Second)},
		{"between second and third", 0, ms(1500 * time.Millisecond), 1, 2, ms(2 * time.Second)},
		{"after every record", 0, ms(time.Hour), 1, -1, -1},
		{"empty latest", 1, -1, 1, 0, -1},
		{"empty earliest", 1, -2, 1, 0, -1},
		{"empty max timestamp", 1, -3, 7, -1, -1},
		{"empty by timestamp", 1, ms(0), 1, -1, -1},
	}
	for v := int16(1); v <= 7; v++ {
		for _, tt := range tests {
			if v < tt.minVersion {
				continue
			}
			p := g.listed(t, testutil.ListOffsetsReq(v, "lo", tt.timestamp, tt.partition))
			wantEpoch := int32(0) // never truncated: epoch 0 for every record, -1 for none
			if tt.wantOffset < 0 {
				wantEpoch = -1
			}
			if p.ErrorCode != 0 || p.Offset != tt.wantOffset || p.Timestamp != tt.wantTs || p.LeaderEpoch != wantEpoch {
				t.Errorf("v%d %s: %+v, want offset %d timestamp %d leader epoch %d", v, tt.name, p, tt.wantOffset, tt.wantTs, wantEpoch)
			}
		}
		c := dialRaw(t, g.addr)
		resp := c.roundTrip(testutil.ListOffsetsReq(v, "lo", -1, 0)).(*kmsg.ListOffsetsResponse)
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.Offset != 3 {
			t.Errorf("v%d over the socket: %+v", v, p)
		}
	}
	for name, req := range map[string]*kmsg.ListOffsetsRequest{
		"unknown topic":      testutil.ListOffsetsReq(7, "missing", -1, 0),
		"unknown partition":  testutil.ListOffsetsReq(7, "lo", -1, 2),
		"invalid topic name": testutil.ListOffsetsReq(7, "bad name!", -1, 0),
	} {
		if p := g.listed(t, req); p.ErrorCode != kerr.UnknownTopicOrPartition.Code || p.Offset != -1 {
			t.Errorf("%s: %+v", name, p)
		}
	}
}
