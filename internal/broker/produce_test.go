package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

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

// produceBatch encodes records as one v2 batch with attributes attrs, compressing the records
// with compress (nil: none).
func produceBatch(t testing.TB, attrs int16, values [][]byte, compress func([]byte) []byte) []byte {
	t.Helper()
	var body []byte
	now := time.Now().UnixMilli()
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: v}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		body = r.AppendTo(body)
	}
	if compress != nil {
		body = compress(body)
	}
	return frameBatch(attrs, now, int32(len(values)), body)
}

// frameBatch frames body (records, maybe compressed) as a v2 batch with a correct CRC.
func frameBatch(attrs int16, ts int64, count int32, body []byte) []byte {
	b := kmsg.RecordBatch{
		Length: int32(61 - 12 + len(body)), Magic: 2, Attributes: attrs, LastOffsetDelta: max(count-1, 0),
		FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: count, Records: body,
	}
	raw := b.AppendTo(nil)
	crc := crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli))
	raw[17], raw[18], raw[19], raw[20] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	return raw
}

func gzipBody(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zstdBody(b []byte) []byte {
	w, _ := zstd.NewWriter(nil)
	defer w.Close()
	return w.EncodeAll(b, nil)
}

func producePartitionReq(version int16, acks int16, topic string, partition int32, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, acks, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

var dataConn = &listener.ConnContext{ID: 1, Listener: "PLAINTEXT"}

// produceCode calls the handler directly and returns the single partition's code and base
// offset.
func (g *gateway) produceCode(t *testing.T, req *kmsg.ProduceRequest) (int16, int64) {
	t.Helper()
	resp, err := g.b.produce(ctxT(t), dataConn, req)
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	return p.ErrorCode, p.BaseOffset
}

// hw reads a partition's high watermark natively.
func (g *gateway) hw(t *testing.T, topic string, partition int) uint64 {
	t.Helper()
	tp, err := g.iggy.GetTopic(ctxT(t), iggy.Name("kafka"), iggy.Name(topic))
	if err != nil {
		t.Fatal(err)
	}
	return highWatermark(&tp.Partitions[partition])
}

// Refusals come with the right code and write nothing.
// withHeader returns a copy of the v2 batch b with its header changed by edit and its CRC
// recomputed, so that only the rule under test is broken.
func withHeader(b []byte, edit func([]byte)) []byte {
	b = bytes.Clone(b)
	edit(b)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func TestProduceRefusals(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "r", 2)
	plain := produceBatch(t, 0, [][]byte{[]byte("a"), []byte("b")}, nil)
	corrupt := bytes.Clone(plain)
	corrupt[len(corrupt)-1] ^= 0xff
	tests := []struct {
		name string
		req  *kmsg.ProduceRequest
		want int16
	}{
		{"acks 2", producePartitionReq(9, 2, "r", 0, plain), kerr.InvalidRequiredAcks.Code},
		{"transactional id", func() *kmsg.ProduceRequest {
			r := producePartitionReq(9, -1, "r", 0, plain)
			id := "tx"
			r.TransactionID = &id
			return r
		}(), kerr.UnsupportedVersion.Code},
		{"transactional batch", producePartitionReq(9, -1, "r", 0, produceBatch(t, 0x10, [][]byte{[]byte("a")}, nil)), kerr.UnsupportedVersion.Code},
		// Kafka's LogValidator.validateBatch rules for client batches, with its codes.
		{"control batch", producePartitionReq(9, -1, "r", 0, produceBatch(t, 0x20, [][]byte{[]byte("a")}, nil)), kerr.InvalidRecord.Code},
		{"last offset delta past the count", producePartitionReq(9, -1, "r", 0, withHeader(plain, func(b []byte) { binary.BigEndian.PutUint32(b[23:], 5) })), kerr.InvalidRecord.Code},
		{"negative last offset delta", producePartitionReq(9, -1, "r", 0, withHeader(plain, func(b []byte) { binary.BigEndian.PutUint32(b[23:], 0xffffffff) })), kerr.InvalidRecord.Code},
		{"empty batch", producePartitionReq(9, -1, "r", 0, withHeader(plain[:61], func(b []byte) {
			binary.BigEndian.PutUint32(b[8:], 61-12)
			binary.BigEndian.PutUint32(b[23:], 0)
			binary.BigEndian.PutUint32(b[57:], 0)
		})), kerr.InvalidRecord.Code},
		{"producer id without sequence", producePartitionReq(9, -1, "r", 0, withHeader(plain, func(b []byte) {
			binary.BigEndian.PutUint64(b[43:], 7)
			binary.BigEndian.PutUint32(b[53:], 0xffffffff)
		})), kerr.InvalidRecord.Code},
		{"zstd before v7", producePartitionReq(6, -1, "r", 0, produceBatch(t, 4, [][]byte{[]byte("a")}, zstdBody)), kerr.UnsupportedCompressionType.Code},
		{"unknown topic", producePartitionReq(9, -1, "missing", 0, plain), kerr.UnknownTopicOrPartition.Code},
		{"unknown partition", producePartitionReq(9, -1, "r", 2, plain), kerr.UnknownTopicOrPartition.Code},
		{"negative partition", producePartitionReq(9, -1, "r", -1, plain), kerr.UnknownTopicOrPartition.Code},
		{"invalid topic name", producePartitionReq(9, -1, "bad name!", 0, plain), kerr.InvalidTopicException.Code},
		{"bad CRC", producePartitionReq(9, -1, "r", 0, corrupt), kerr.CorruptMessage.Code},
		{"trailing bytes", producePartitionReq(9, -1, "r", 0, append(bytes.Clone(plain), 1, 2, 3)), kerr.InvalidRecord.Code},
		{"no batch", producePartitionReq(9, -1, "r", 0, nil), kerr.InvalidRecord.Code},
		{"magic 1", producePartitionReq(9, -1, "r", 0, func() []byte { b := bytes.Clone(plain); b[16] = 1; return b }()), kerr.InvalidRecord.Code},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, base := g.produceCode(t, tt.req)
			if code != tt.want || base != -1 {
				t.Errorf("code %d base %d, want %d and -1", code, base, tt.want)
			}
		})
	}
	if hw0, hw1 := g.hw(t, "r", 0), g.hw(t, "r", 1); hw0 != 0 || hw1 != 0 {
		t.Fatalf("refused requests wrote messages: high watermarks %d, %d", hw0, hw1)
	}
	// zstd is fine from v7; the base offset comes from Iggy.
	for i, v := range []int16{7, 9} {
		code, base := g.produceCode(t, producePartitionReq(v, -1, "r", 1, produceBatch(t, 4, [][]byte{[]byte("a"), []byte("b")}, zstdBody)))
		if code != 0 || base != int64(2*i) {
			t.Errorf("zstd v%d: code %d base %d", v, code, base)
		}
	}
}

// One partition's refusal does not stop the others of the request.
func TestProducePartitionsIndependent(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "multi", 4)
	req := producePartitionReq(9, -1, "multi", 0, produceBatch(t, 0, [][]byte{[]byte("p0")}, nil))
	for p := int32(1); p < 4; p++ {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = p
		rp.Records = produceBatch(t, 1, [][]byte{fmt.Appendf(nil, "p%d-a", p), fmt.Appendf(nil, "p%d-b", p)}, gzipBody)
		if p == 2 {
			rp.Records = produceBatch(t, 0x10, [][]byte{[]byte("tx")}, nil)
		}
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
	}
	resp, err := g.b.produce(ctxT(t), dataConn, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.(*kmsg.ProduceResponse).Topics[0].Partitions {
		want := int16(0)
		if p.Partition == 2 {
			want = kerr.UnsupportedVersion.Code
		}
		if p.ErrorCode != want || (want == 0) != (p.BaseOffset == 0) {
			t.Errorf("partition %d: code %d base %d, want code %d", p.Partition, p.ErrorCode, p.BaseOffset, want)
		}
	}
	for p, want := range []uint64{1, 2, 0, 2} {
		if hw := g.hw(t, "multi", p); hw != want {
			t.Errorf("partition %d holds %d messages, want %d", p, hw, want)
		}
	}
}

// Without the bridge nothing is stored: every partition answers NOT_LEADER_OR_FOLLOWER, and
// acks=0 closes the connection.
func TestProduceBridgeOff(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	code, _ := g.produceCode(t, producePartitionReq(9, -1, "t", 0, produceBatch(t, 0, [][]byte{[]byte("a")}, nil)))
	if code != kerr.NotLeaderForPartition.Code {
		t.Errorf("code %d", code)
	}
	if _, err := g.b.produce(ctxT(t), dataConn, producePartitionReq(9, 0, "t", 0, produceBatch(t, 0, [][]byte{[]byte("a")}, nil))); err == nil {
		t.Error("acks=0 without the bridge: no error, want the connection closed")
	}
}

// acks=0: a write answers nothing, a failed one closes the connection (over a real socket).
func TestProduceAcksZero(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "a0", 1)
	c := dialRaw(t, g.addr)
	c.send(producePartitionReq(9, 0, "a0", 0, produceBatch(t, 0, [][]byte{[]byte("x")}, nil)), 1)
	// The next response on the connection is the ApiVersions one: the produce got none.
	api := kmsg.NewPtrApiVersionsRequest()
	if resp := c.roundTrip(api); resp.(*kmsg.ApiVersionsResponse).ErrorCode != 0 {
		t.Fatal("ApiVersions failed")
	}
	if hw := g.hw(t, "a0", 0); hw != 1 {
		t.Fatalf("acks=0 wrote %d messages, want 1", hw)
	}
	c.send(producePartitionReq(9, 0, "missing", 0, produceBatch(t, 0, [][]byte{[]byte("x")}, nil)), 2)
	if f := c.frame(); f != nil {
		t.Fatalf("a failed acks=0 produce got a %d-byte response, want the connection closed", len(f))
	}
}

// sendFaults fails SendBatch with a chosen error, or blocks it until its context ends.
type sendFaults struct {
	iggy.API
	sendErr atomic.Pointer[error]
	block   atomic.Bool
}

func (f *sendFaults) SendBatch(ctx context.Context, stream, topic iggy.Identifier, partition uint32, b *iggy.Batch) (iggy.SendConfirmation, error) {
	if f.block.Load() {
		<-ctx.Done()
		return iggy.SendConfirmation{}, &iggy.ConnError{Op: "send messages", Err: ctx.Err(), Sent: true}
	}
	if err := f.sendErr.Load(); err != nil {
		return iggy.SendConfirmation{}, *err
	}
	return f.API.SendBatch(ctx, stream, topic, partition, b)
}

// Iggy failures map to the codes of the upstream gateway; a send that may have landed is a
// timeout (the producer retries knowing it may duplicate), and timeout_ms is honoured.
func TestProduceSendFailures(t *testing.T) {
	var fi *sendFaults
	g := startGateway(t, gatewayOpts{bridge: true, wrap: func(a iggy.API) iggy.API { fi = &sendFaults{API: a}; return fi }})
	g.mkTopic("kafka", "f", 1)
	records := produceBatch(t, 0, [][]byte{[]byte("x")}, nil)
	for _, tt := range []struct {
		name string
		err  error
		want int16
	}{
		{"maybe applied", &iggy.ConnError{Op: "send messages", Err: errors.New("reset"), Sent: true}, kerr.RequestTimedOut.Code},
		{"not sent", &iggy.ConnError{Op: "send messages", Err: errors.New("refused")}, kerr.NotLeaderForPartition.Code},
		{"unauthorized", &iggy.Error{Code: iggy.CodeUnauthorized}, kerr.TopicAuthorizationFailed.Code},
		{"partition gone", &iggy.Error{Code: iggy.CodePartitionNotFound}, kerr.UnknownTopicOrPartition.Code},
		{"payload too big", &iggy.Error{Code: iggy.CodeTooBigMessagePayload}, kerr.MessageTooLarge.Code},
		{"not committed", &iggy.Error{Code: iggy.CodeTransientNotCommitted}, kerr.RequestTimedOut.Code},
		{"other", &iggy.Error{Code: iggy.CodeError}, kerr.UnknownServerError.Code},
	} {
		fi.sendErr.Store(&tt.err)
		if code, _ := g.produceCode(t, producePartitionReq(9, -1, "f", 0, records)); code != tt.want {
			t.Errorf("%s: code %d, want %d", tt.name, code, tt.want)
		}
	}
	fi.sendErr.Store(nil)
	fi.block.Store(true)
	req := producePartitionReq(9, -1, "f", 0, records)
	req.TimeoutMillis = 50
	if code, _ := g.produceCode(t, req); code != kerr.RequestTimedOut.Code {
		t.Errorf("blocked send with timeout_ms 50: code %d, want REQUEST_TIMED_OUT", code)
	}
}

// A small compressed frame that would inflate to 1 GiB is refused with MESSAGE_TOO_LARGE and
// the decompression allocates about the budget (the frame limit), not the inflated size.
func TestProduceDecompressionBomb(t *testing.T) {
	const budget = 4 << 20
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{fmt.Sprintf("IGGY_KAFKA_MAX_FRAME_SIZE=%d", budget)}})
	g.mkTopic("kafka", "bomb", 1)
	bombs := map[string][]byte{
		"zstd 1 GiB of RLE blocks": testutil.ZstdRLEBomb(8192),
		"gzip 64 MiB":              gzipBody(make([]byte, 64<<20)),
	}
	for name, body := range bombs {
		codec := int16(1)
		if strings.HasPrefix(name, "zstd") {
			codec = 4
		}
		req := producePartitionReq(9, -1, "bomb", 0, frameBatch(codec, time.Now().UnixMilli(), 1, body))
		g.produceCode(t, producePartitionReq(9, -1, "bomb", 0, produceBatch(t, codec, [][]byte{[]byte("warm")}, map[int16]func([]byte) []byte{1: gzipBody, 4: zstdBody}[codec])))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code, _ := g.produceCode(t, req)
		runtime.ReadMemStats(&after)
		if code != kerr.MessageTooLarge.Code {
			t.Errorf("%s (%d bytes): code %d, want MESSAGE_TOO_LARGE", name, len(body), code)
		}
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d-byte frame refused after allocating %d bytes", name, len(body), allocated)
		if allocated > 8*budget {
			t.Errorf("%s: allocated %d bytes with a %d-byte budget", name, allocated, budget)
		}
	}
	if hw := g.hw(t, "bomb", 0); hw != 2 {
		t.Errorf("partition holds %d messages, want only the 2 warm-up records", hw)
	}
}

// A bounded number of Produce requests decode at once; one that finds no slot before its
// timeout answers REQUEST_TIMED_OUT without writing.
func TestProduceDecodeSlots(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "slots", 1)
	var releases []func()
	for range max(4, runtime.GOMAXPROCS(0)) {
		release, err := g.b.data.acquireDecode(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	req := producePartitionReq(9, -1, "slots", 0, produceBatch(t, 0, [][]byte{[]byte("x")}, nil))
	req.TimeoutMillis = 50
	if code, _ := g.produceCode(t, req); code != kerr.RequestTimedOut.Code {
		t.Errorf("with every slot taken: code %d, want REQUEST_TIMED_OUT", code)
	}
	if hw := g.hw(t, "slots", 0); hw != 0 {
		t.Errorf("a request without a slot wrote %d messages", hw)
	}
	releases[0]()
	if code, base := g.produceCode(t, req); code != 0 || base != 0 {
		t.Errorf("with a free slot: code %d base %d", code, base)
	}
	for _, release := range releases[1:] {
		release()
	}
}
