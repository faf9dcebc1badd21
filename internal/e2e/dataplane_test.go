package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"

	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// The data path seen from both sides: what a Kafka producer writes is native Iggy data, what a
// native Iggy client writes is read by Kafka consumers, a write wakes a waiting consumer, and
// a decompression bomb is refused with the gateway's memory bounded.

// TestFranzGoDataPlane runs the data-path scenarios that pair franz-go with the project's
// Iggy client.
func TestFranzGoDataPlane(t *testing.T) {
	runScenarios(t, franzFamily, []Scenario{
		{Name: "native-iggy-read", Needs: []Feature{FeatureCore, FeatureProduce}, Covers: []Cell{CellProduce}, Run: franzNativeRead},
		{Name: "native-iggy-write", Needs: []Feature{FeatureCore, FeatureFetch, FeatureListOffsets}, Covers: []Cell{CellConsume}, Run: franzNativeWrite},
		{Name: "decompression-bomb", Needs: []Feature{FeatureCore, FeatureProduce, FeatureZstd, FeatureGzip}, Run: franzDecompressionBomb},
	})
}

// iggyClientFor returns the harness's Iggy client, skipping t for an external endpoint.
func iggyClientFor(t *testing.T, env *Env) *iggy.Client {
	t.Helper()
	if env.External() {
		t.Skip("needs the Iggy server behind a harness gateway (IGGYGW_E2E_BOOTSTRAP is set)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := env.iggy.iggyClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// franzNativeRead: records produced by franz-go read with the project's Iggy client show the
// storage format of docs/STORAGE-FORMAT.md: payload = value, kafka.v, kafka.key, kafka.h.*,
// origin timestamp = Kafka timestamp in µs, kafka.value for a null value, and the producer
// headers (kafka.pid, kafka.epoch, kafka.seq, kafka.count) on the first message of franz-go's
// idempotent batch.
func franzNativeRead(t *testing.T, env *Env) {
	ic := iggyClientFor(t, env)
	topic := env.CreateTopic(t, 1)
	ctx := ctxFor(t, 30*time.Second)
	ts := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	recs := []*kgo.Record{
		{Topic: topic, Key: []byte("key-1"), Value: []byte("value-1"), Timestamp: ts,
			Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("t-1")}, {Key: "tenant", Value: []byte("acme")}}},
		{Topic: topic, Value: nil, Timestamp: ts.Add(time.Millisecond)},
	}
	if err := env.Kgo(t, kgo.RecordPartitioner(kgo.ManualPartitioner())).ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p := uint32(0)
	polled, err := ic.PollMessages(ctx, iggy.PollRequest{Consumer: iggy.Consumer{Kind: iggy.ConsumerKindConsumer, ID: iggy.Name("e2e")},
		Stream: iggy.Name(kafkaStream), Topic: iggy.Name(topic), Partition: &p, Strategy: iggy.PollingStrategy{Kind: iggy.PollFirst}, Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(polled.Messages) != 2 {
		t.Fatalf("Iggy holds %d messages, want 2", len(polled.Messages))
	}
	want := []struct {
		payload string
		origin  time.Time
		headers map[string]string
	}{
		{"value-1", ts, map[string]string{"kafka.v": "\x01", "kafka.key": "key-1", "kafka.h.trace": "t-1", "kafka.h.tenant": "acme"}},
		{"\x00", ts.Add(time.Millisecond), map[string]string{"kafka.v": "\x01", "kafka.value": "null"}},
	}
	for i, m := range polled.Messages {
		headers := map[string]string{}
		if err := iggy.ParseHeaders(m.Headers, func(_ uint8, k []byte, _ uint8, v []byte) bool {
			headers[string(k)] = string(v)
			return true
		}); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if i == 0 {
			checkProducerHeaders(t, headers, 0, len(want))
		}
		w := want[i]
		if m.Offset != uint64(i) || string(m.Payload) != w.payload || m.OriginTimestamp != uint64(w.origin.UnixMicro()) ||
			fmt.Sprint(headers) != fmt.Sprint(w.headers) {
			t.Errorf("message %d: offset %d payload %q origin %d headers %q; want offset %d payload %q origin %d headers %q",
				i, m.Offset, m.Payload, m.OriginTimestamp, headers, i, w.payload, w.origin.UnixMicro(), w.headers)
		}
	}
}

// checkProducerHeaders checks, and removes from headers, the producer headers an idempotent
// batch's first message carries (docs/STORAGE-FORMAT.md): a producer id, an epoch, the batch's
// base sequence and its record count, little-endian.
func checkProducerHeaders(t *testing.T, headers map[string]string, seq, count int) {
	t.Helper()
	le := func(v string) (n int64) {
		for i := len(v) - 1; i >= 0; i-- {
			n = n<<8 | int64(v[i])
		}
		return n
	}
	pid, epoch := headers["kafka.pid"], headers["kafka.epoch"]
	if len(pid) != 8 || le(pid) < 0 || len(epoch) != 2 {
		t.Errorf("producer id %q, epoch %q: want 8 and 2 bytes", pid, epoch)
	}
	if got := headers["kafka.seq"]; len(got) != 4 || le(got) != int64(seq) {
		t.Errorf("kafka.seq %q, want %d", got, seq)
	}
	if got := headers["kafka.count"]; len(got) != 4 || le(got) != int64(count) {
		t.Errorf("kafka.count %q, want %d", got, count)
	}
	for _, k := range []string{"kafka.pid", "kafka.epoch", "kafka.seq", "kafka.count"} {
		delete(headers, k)
	}
}

// franzNativeWrite: messages sent by a native Iggy client are read by franz-go as records with
// a null key, the payload as value, the user headers as record headers and the origin
// timestamp; a consumer waiting at the end of the partition gets a native write promptly.
func franzNativeWrite(t *testing.T, env *Env) {
	ic := iggyClientFor(t, env)
	topic := env.CreateTopic(t, 1)
	ctx := ctxFor(t, 60*time.Second)
	origin := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	send := func(payload string, origin time.Time, headers ...string) {
		t.Helper()
		var block []byte
		for i := 0; i < len(headers); i += 2 {
			block = iggy.AppendHeader(block, iggy.HeaderString, []byte(headers[i]), iggy.HeaderRaw, []byte(headers[i+1]))
		}
		if _, err := ic.SendMessages(ctx, iggy.Name(kafkaStream), iggy.Name(topic), 0,
			[]iggy.Message{{Payload: []byte(payload), Headers: block, OriginTimestamp: uint64(origin.UnixMicro())}}); err != nil {
			t.Fatal(err)
		}
	}
	send("native-1", origin, "source", "iggy")
	send("native-2", origin.Add(time.Second))

	consumer := env.Kgo(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchMaxWait(30*time.Second))
	got := pollN(t, ctx, consumer, 2)
	want := []*kgo.Record{
		{Value: []byte("native-1"), Timestamp: origin, Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("iggy")}}},
		{Value: []byte("native-2"), Timestamp: origin.Add(time.Second)},
	}
	for i := range want {
		if msg := diffRecord(got[i], want[i], int64(i)); msg != "" {
			t.Errorf("record %d: %s", i, msg)
		}
	}
	// The consumer now waits at the end with a 30 s max wait: a native write must reach it
	// through the gateway's offset probe, well before that. The pause lets its next fetch
	// reach the gateway and park.
	time.Sleep(500 * time.Millisecond)
	written := time.Now()
	send("native-3", written)
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	late := pollN(t, pctx, consumer, 1)
	if string(late[0].Value) != "native-3" || late[0].Offset != 2 {
		t.Errorf("after waiting: %s@%d, want native-3@2", late[0].Value, late[0].Offset)
	}
	t.Logf("a native write reached the waiting consumer after %s", time.Since(written).Round(time.Millisecond))
}

// bombBudget is the frame limit (and so the decompression budget) of the bomb scenario's
// gateway.
const bombBudget = 16 << 20

// franzDecompressionBomb: small compressed Produce frames that would inflate to 1 GiB (and
// 64 MiB) are refused with MESSAGE_TOO_LARGE, the gateway's peak resident memory stays far
// below the inflated size, nothing is written and the gateway keeps serving.
func franzDecompressionBomb(t *testing.T, env *Env) {
	if env.External() {
		t.Skip("measures the memory of a harness gateway")
	}
	own := startOwnGateway(t, fmt.Sprintf("IGGY_KAFKA_MAX_FRAME_SIZE=%d", bombBudget))
	topic := own.CreateTopic(t, 1)
	ctx := ctxFor(t, 60*time.Second)
	cl := own.Kgo(t)
	before := peakRSS(t, own.gateway)
	bombs := []struct {
		name  string
		codec int16
		body  []byte
	}{
		{"zstd frame declaring 1 GiB", 4, testutil.ZstdDeclaredBomb()},
		{"zstd RLE blocks inflating to 1 GiB", 4, testutil.ZstdRLEBomb(8192)},
		{"gzip of 64 MiB of zeros", 1, gzipZeros(64 << 20)},
	}
	for _, b := range bombs {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, -1, 10_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = compressedBatch(b.codec, b.body)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		code := resp.Topics[0].Partitions[0].ErrorCode
		if code != kerr.MessageTooLarge.Code {
			t.Errorf("%s (%d bytes): error %v, want MESSAGE_TOO_LARGE", b.name, len(rp.Records), kerr.ErrorForCode(code))
		}
	}
	after := peakRSS(t, own.gateway)
	t.Logf("gateway peak RSS %d MiB before the bombs, %d MiB after (budget %d MiB, race detector on)", before>>20, after>>20, bombBudget>>20)
	// The race detector's shadow memory multiplies what the decoder touches; the bound is
	// still far below the 1 GiB the bombs inflate to.
	if limit := before + 24*bombBudget; after > limit {
		t.Errorf("peak RSS %d MiB after the bombs, want at most %d MiB", after>>20, limit>>20)
	}
	offsets, err := own.Admin(t).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offsets.Lookup(topic, 0); o.Offset != 0 {
		t.Errorf("end offset %d after refused bombs, want 0", o.Offset)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("still serving")}).FirstErr(); err != nil {
		t.Errorf("produce after the bombs: %v", err)
	}
}

// peakRSS is the gateway's peak resident set size so far.
func peakRSS(t *testing.T, g *childproc.Gateway) int64 {
	t.Helper()
	rss, err := childproc.PeakRSS(g.PID())
	if err != nil {
		t.Fatalf("peak RSS of the gateway: %v", err)
	}
	return rss
}

// compressedBatch frames an already compressed records section as a one-record v2 batch.
func compressedBatch(codec int16, body []byte) []byte {
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{
		Length: int32(61 - 12 + len(body)), Magic: 2, Attributes: codec, FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 1, Records: body,
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func gzipZeros(n int) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	w.Write(make([]byte, n))
	w.Close()
	return buf.Bytes()
}
