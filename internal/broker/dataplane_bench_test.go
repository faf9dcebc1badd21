package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// The data-plane benchmarks call the Produce and Fetch handlers through the dispatcher, with
// no listener, against an in-memory Iggy server reached over loopback TCP by the real client.
// They measure the handler path (batch validation, decompression, record ↔ message mapping,
// Iggy frames, response building) per request, and are what to profile for it:
//
//	go test -run '^$' -bench 'Produce|Fetch' -benchmem -cpuprofile cpu.out ./internal/broker
//	go tool pprof -top -focus 'broker|kbatch|mapping|iggy\.' cpu.out
//
// The profile also holds the in-memory server's own work (package memserver).

const (
	benchPartitions = 4
	benchRecords    = 1000 // per partition and request: about what franz-go batches at 1 KiB
	benchValueSize  = 1024
)

type benchEnv struct {
	b  *Broker
	cl *iggy.Client
	cc *listener.ConnContext
}

func newBenchEnv(tb testing.TB, env ...string) *benchEnv {
	tb.Helper()
	ms, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ms.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := iggy.Dial(ctx, iggy.Config{Addr: ms.Addr(), Username: "iggy", Password: "iggy"}) // pool size as the gateway's
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cl.Close() })
	if _, err := cl.CreateStream(ctx, "kafka"); err != nil {
		tb.Fatal(err)
	}
	cfg, err := config.Load(nil, append([]string{"IGGY_KAFKA_BIND_ADDR=127.0.0.1:0"}, env...))
	if err != nil {
		tb.Fatal(err)
	}
	br, err := New(Options{Config: cfg, Iggy: cl, ClusterID: ClusterID("bench"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	return &benchEnv{b: br, cl: cl, cc: &listener.ConnContext{}}
}

func (e *benchEnv) topic(tb testing.TB, name string) {
	tb.Helper()
	if _, err := e.cl.CreateTopic(context.Background(), iggy.Name("kafka"), name, benchPartitions, iggy.TopicOptions{}); err != nil {
		tb.Fatal(err)
	}
}

// serve runs req through the dispatcher as the listener would.
func (e *benchEnv) serve(tb testing.TB, req kmsg.Request) kmsg.Response {
	h, ok := e.b.Lookup(e.cc, req.Key(), req.GetVersion())
	if !ok {
		tb.Fatalf("%s v%d not served", kmsg.NameForKey(req.Key()), req.GetVersion())
	}
	resp, err := h.Serve(context.Background(), e.cc, req)
	if err != nil {
		tb.Fatal(err)
	}
	return resp
}

// benchBatch is one v2 batch of benchRecords keyless 1 KiB records, compressed with lz4 when
// asked (Kafka's lz4 is the frame format).
func benchBatch(tb testing.TB, compress bool) []byte {
	value := bytes.Repeat([]byte("benchmark value "), benchValueSize/16)
	var bld kbatch.Builder
	bld.Begin(nil, -1)
	now := time.Now().UnixMilli()
	for i := range benchRecords {
		if err := bld.Append(int64(i), now, nil, value, nil); err != nil {
			tb.Fatal(err)
		}
	}
	raw := bld.Finish()
	if !compress {
		return raw
	}
	var z bytes.Buffer
	w := lz4.NewWriter(&z)
	if _, err := w.Write(raw[kbatch.HeaderSize:]); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	// v2 header: length at 8 (bytes after it), attributes at 21 (codec in the low 3 bits),
	// CRC32C at 17 over everything from the attributes on.
	out := append(raw[:kbatch.HeaderSize:kbatch.HeaderSize], z.Bytes()...)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint16(out[21:], binary.BigEndian.Uint16(out[21:])|uint16(kbatch.CodecLZ4))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// benchCodecs are the producer codecs the Produce benchmarks run with.
var benchCodecs = []struct {
	name     string
	compress bool
}{{"none", false}, {"lz4", true}}

func benchProduceReq(topic string, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 30_000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	for p := range benchPartitions {
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Partition, pp.Records = int32(p), batch
		t.Partitions = append(t.Partitions, pp)
	}
	req.Topics = append(req.Topics, t)
	return req
}

func benchCheckProduce(tb testing.TB, resp kmsg.Response) {
	for _, t := range resp.(*kmsg.ProduceResponse).Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				tb.Fatalf("produce partition %d: error %d", p.Partition, p.ErrorCode)
			}
		}
	}
}

// BenchmarkProduce is one Produce request of 4 partitions × 1000 records × 1 KiB, acks=all.
// Throughput is in record value bytes.
func BenchmarkProduce(b *testing.B) {
	for _, tc := range benchCodecs {
		b.Run(tc.name, func(b *testing.B) {
			e := newBenchEnv(b)
			e.topic(b, "produce")
			req := benchProduceReq("produce", benchBatch(b, tc.compress))
			b.SetBytes(benchPartitions * benchRecords * benchValueSize)
			b.ReportAllocs()
			sent := 0
			for b.Loop() {
				benchCheckProduce(b, e.serve(b, req))
				// Keep the in-memory server's memory bounded: purging is not measured.
				if sent++; sent%64 == 0 {
					b.StopTimer()
					if err := e.cl.PurgeTopic(context.Background(), iggy.Name("kafka"), iggy.Name("produce")); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkFetch is one Fetch request reading 1 MiB from each of 4 partitions from offset 0,
// as franz-go asks by default (partition_max_bytes 1 MiB), read from Iggy or served from the
// tail cache.
func BenchmarkFetch(b *testing.B) {
	b.Run("iggy", func(b *testing.B) { benchFetch(b, "IGGY_KAFKA_TAIL_CACHE_BYTES=0") })
	b.Run("cached", func(b *testing.B) { benchFetch(b) })
}

func benchFetch(b *testing.B, env ...string) {
	e := newBenchEnv(b, env...)
	e.topic(b, "fetch")
	benchCheckProduce(b, e.serve(b, benchProduceReq("fetch", benchBatch(b, false))))
	benchCheckProduce(b, e.serve(b, benchProduceReq("fetch", benchBatch(b, false))))

	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 12, 0, 1, 50<<20
	req.SessionEpoch = -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic = "fetch"
	for p := range benchPartitions {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = int32(p), 0, 1<<20
		t.Partitions = append(t.Partitions, fp)
	}
	req.Topics = append(req.Topics, t)

	var bytesRead int
	b.ReportAllocs()
	for b.Loop() {
		wrapped := e.serve(b, req).(*listener.Response)
		resp := wrapped.Response.(*kmsg.FetchResponse)
		bytesRead = 0
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
				b.Fatalf("fetch partition %d: error %d, %d bytes", p.Partition, p.ErrorCode, len(p.RecordBatches))
			}
			bytesRead += len(p.RecordBatches)
		}
		wrapped.Release() // as the listener does once the response is written
	}
	b.SetBytes(int64(bytesRead))
}

// BenchmarkConvert is the per-record work of Produce for one partition, without Iggy:
// checking the batch (CRC32C, structure), decompressing it, and mapping its 1000 records of
// 1 KiB into an Iggy batch (headers, value copies, per-message checksums).
func BenchmarkConvert(b *testing.B) {
	for _, tc := range benchCodecs {
		b.Run(tc.name, func(b *testing.B) {
			raw := benchBatch(b, tc.compress)
			var conv converter
			b.SetBytes(benchRecords * benchValueSize)
			b.ReportAllocs()
			for b.Loop() {
				out, _, err := conv.convert(9, raw, kbatch.NewBudget(64<<20), true)
				if err != nil {
					b.Fatal(err)
				}
				putBatch(out)
			}
		})
	}
}
