package listener

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The data-plane frames: a Produce request and a Fetch response each carrying 4 partitions of
// 1 MiB of record batches, the size franz-go sends and asks for by default. The records are
// opaque bytes to the listener, so their content does not matter.

const (
	benchDataPartitions = 4
	benchDataBytes      = 1 << 20
)

func BenchmarkParseFrameProduce(b *testing.B) {
	records := bytes.Repeat([]byte{'r'}, benchDataBytes)
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 30_000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = "orders"
	for p := range benchDataPartitions {
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Partition, pp.Records = int32(p), records
		t.Partitions = append(t.Partitions, pp)
	}
	req.Topics = append(req.Topics, t)
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

func BenchmarkAppendResponseFetch(b *testing.B) {
	records := bytes.Repeat([]byte{'r'}, benchDataBytes)
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 12
	t := kmsg.NewFetchResponseTopic()
	t.Topic = "orders"
	for p := range benchDataPartitions {
		fp := kmsg.NewFetchResponseTopicPartition()
		fp.Partition, fp.HighWatermark, fp.LastStableOffset, fp.RecordBatches = int32(p), 4096, 4096, records
		t.Partitions = append(t.Partitions, fp)
	}
	resp.Topics = append(resp.Topics, t)
	b.Run("fresh buffer", func(b *testing.B) {
		var n int
		b.ReportAllocs()
		for b.Loop() {
			n = len(appendResponse(nil, 1, resp))
		}
		b.SetBytes(int64(n))
	})
	b.Run("reused buffer", func(b *testing.B) {
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			buf = appendResponse(buf[:0], 1, resp)
		}
		b.SetBytes(int64(len(buf)))
	})
}
