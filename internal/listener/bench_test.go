package listener

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func BenchmarkParseFrameMetadata(b *testing.B) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	for _, n := range []string{"orders", "payments", "events"} {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, t)
	}
	frame := format(req, 1)[4:]
	cc := &ConnContext{}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseFrame(cc, tableDispatcher{}, frame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendResponseMetadata(b *testing.B) {
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	for range 10 {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic = kmsg.StringPtr("topic")
		t.Partitions = make([]kmsg.MetadataResponseTopicPartition, 16)
		resp.Topics = append(resp.Topics, t)
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = appendResponse(buf[:0], 1, resp)
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkRoundTrip measures one request/response over a loopback connection, framing and
// scheduling included.
func BenchmarkRoundTrip(b *testing.B) {
	s := startServer(b, routes{60: {0, 1, Handler{Serve: echoDescribeCluster}}}, nil)
	c := dial(b, s.addr)
	req := kmsg.NewPtrDescribeClusterRequest()
	frame := format(req, 1)
	b.ReportAllocs()
	for b.Loop() {
		c.nc.Write(frame)
		if c.readFrame() == nil {
			b.Fatal("closed")
		}
	}
}
