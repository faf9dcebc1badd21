package broker

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/dataplane"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// edgeRecords are records whose storage takes every path of the mapping: null and empty keys
// and values, headers in order and repeated, long keys and headers (envelope), binary bytes,
// a 1 MiB value, a timestamp of 0.
func edgeRecords(topic string) []*kgo.Record {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	bin := []byte{0, 1, 2, 0xff, 0xfe, '\n', 0}
	recs := []*kgo.Record{
		{Key: []byte("k0"), Value: []byte("v0"), Headers: []kgo.RecordHeader{{Key: "h1", Value: []byte("a")}, {Key: "h2", Value: []byte("b")}}},
		{Key: nil, Value: []byte("null key")},
		{Key: []byte{}, Value: []byte("empty key")},
		{Key: []byte("null value"), Value: nil},
		{Key: []byte("empty value"), Value: []byte{}},
		{Key: bin, Value: bin, Headers: []kgo.RecordHeader{{Key: "bin", Value: bin}}},
		{Key: []byte("dup"), Value: []byte("x"), Headers: []kgo.RecordHeader{{Key: "d", Value: []byte("1")}, {Key: "d", Value: []byte("2")}, {Key: "e", Value: []byte("3")}}},
		{Key: []byte("null header"), Value: []byte("x"), Headers: []kgo.RecordHeader{{Key: "n", Value: nil}, {Key: "", Value: []byte("empty name")}}},
		{Key: bytes.Repeat([]byte("K"), 300), Value: []byte("long key"), Headers: []kgo.RecordHeader{{Key: strings.Repeat("n", 300), Value: bytes.Repeat([]byte("v"), 300)}}},
		{Key: []byte("big"), Value: bytes.Repeat([]byte("0123456789abcdef"), 1<<16)},
		{Key: []byte("epoch"), Value: []byte("timestamp 0"), Timestamp: time.UnixMilli(0)},
	}
	for i, r := range recs {
		r.Topic = topic
		if r.Timestamp.IsZero() {
			r.Timestamp = base.Add(time.Duration(i) * time.Second)
		}
	}
	return recs
}

var codecs = map[string]kgo.CompressionCodec{
	"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
	"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

// Every codec: franz-go produces the edge records and a batch of 10 000, reads them back
// byte-exact at the offsets Produce returned.
func TestProduceFetchEveryCodec(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			topic := "codec-" + name
			g.mkTopic("kafka", topic, 1)
			ctx := ctxT(t)
			cl, _ := g.kafka(kgo.ProducerBatchCompression(codec), kgo.ProducerBatchMaxBytes(4<<20), kgo.ProducerLinger(20*time.Millisecond))
			want := edgeRecords(topic)
			if err := cl.ProduceSync(ctx, want...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			for i, r := range want {
				if r.Offset != int64(i) {
					t.Fatalf("record %d acknowledged at offset %d", i, r.Offset)
				}
			}
			var many []*kgo.Record
			for i := range 10_000 {
				many = append(many, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "m%d", i), Value: fmt.Appendf(nil, "value %d", i),
					Headers: []kgo.RecordHeader{{Key: "i", Value: fmt.Appendf(nil, "%d", i)}}})
			}
			if err := cl.ProduceSync(ctx, many...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			want = append(want, many...)
			got := g.consume(t, ctx, topic, 0, 0, len(want), kgo.FetchMaxBytes(8<<20))
			for i := range want {
				if diff := recordsEqual(got[i], want[i], int64(i)); diff != "" {
					t.Fatalf("record %d: %s", i, diff)
				}
			}
		})
	}
}

// A Kafka producer's records read natively from Iggy: payload, kafka.key, kafka.h.* and
// the origin timestamp are what the storage format says.
func TestProduceNativeRead(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "native", 1)
	ctx := ctxT(t)
	cl, _ := g.kafka()
	ts := time.UnixMilli(1_700_000_000_123)
	r := &kgo.Record{Topic: "native", Key: []byte("key"), Value: []byte("payload"), Timestamp: ts,
		Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("t1")}}}
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p := uint32(0)
	polled, err := g.iggy.PollMessages(ctx, iggy.PollRequest{Consumer: iggy.Consumer{Kind: iggy.ConsumerKindConsumer, ID: iggy.ID(1)},
		Stream: iggy.Name("kafka"), Topic: iggy.Name("native"), Partition: &p, Strategy: iggy.PollingStrategy{Kind: iggy.PollFirst}, Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(polled.Messages) != 1 {
		t.Fatalf("%d messages", len(polled.Messages))
	}
	m := polled.Messages[0]
	if string(m.Payload) != "payload" || m.OriginTimestamp != uint64(ts.UnixMilli())*1000 || m.Offset != 0 {
		t.Errorf("message %+v", m)
	}
	headers := map[string]string{}
	if err := iggy.ParseHeaders(m.Headers, func(_ uint8, k []byte, _ uint8, v []byte) bool {
		headers[string(k)] = string(v)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	// franz-go produces idempotently: the batch's first message also carries its producer
	// (docs/STORAGE-FORMAT.md §2.4).
	for _, k := range []string{"kafka.pid", "kafka.epoch", "kafka.seq", "kafka.count"} {
		if _, ok := headers[k]; !ok {
			t.Errorf("no producer header %s", k)
		}
		delete(headers, k)
	}
	want := map[string]string{"kafka.v": "\x01", "kafka.key": "key", "kafka.h.trace": "t1"}
	if fmt.Sprint(headers) != fmt.Sprint(want) {
		t.Errorf("headers %q, want %q", headers, want)
	}
}

var dataConn = &listener.ConnContext{ID: 1, Listener: "PLAINTEXT"}

// hw reads a partition's high watermark natively.
func (g *gateway) hw(t *testing.T, topic string, partition int) uint64 {
	t.Helper()
	tp, err := g.iggy.GetTopic(ctxT(t), iggy.Name("kafka"), iggy.Name(topic))
	if err != nil {
		t.Fatal(err)
	}
	return dataplane.HighWatermark(&tp.Partitions[partition])
}

// acks=0: a write answers nothing, a failed one closes the connection (over a real socket).
func TestProduceAcksZero(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "a0", 1)
	c := dialRaw(t, g.addr)
	c.send(testutil.ProducePartitionReq(9, 0, "a0", 0, testutil.ProduceBatch(t, 0, [][]byte{[]byte("x")}, nil)), 1)
	// The next response on the connection is the ApiVersions one: the produce got none.
	api := kmsg.NewPtrApiVersionsRequest()
	if resp := c.roundTrip(api); resp.(*kmsg.ApiVersionsResponse).ErrorCode != 0 {
		t.Fatal("ApiVersions failed")
	}
	if hw := g.hw(t, "a0", 0); hw != 1 {
		t.Fatalf("acks=0 wrote %d messages, want 1", hw)
	}
	c.send(testutil.ProducePartitionReq(9, 0, "missing", 0, testutil.ProduceBatch(t, 0, [][]byte{[]byte("x")}, nil)), 2)
	if f := c.frame(); f != nil {
		t.Fatalf("a failed acks=0 produce got a %d-byte response, want the connection closed", len(f))
	}
}
