package dataplane

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

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

const (
	benchPartitions = 4
	benchRecords    = 1000 // per partition and request: about what franz-go batches at 1 KiB
	benchValueSize  = 1024
)

type benchEnv struct {
	b  *Plane
	cl *iggy.Client
	cc *listener.ConnContext
}

func newBenchEnv(tb testing.TB, env ...string) *benchEnv {
	tb.Helper()
	g := startGateway(tb, gatewayOpts{bridge: true, env: env, poolSize: -1, logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := g.iggy.CreateStream(ctxT(tb), "kafka"); err != nil {
		tb.Fatal(err)
	}
	return &benchEnv{b: g.b, cl: g.iggy, cc: &listener.ConnContext{}}
}

func (e *benchEnv) topic(tb testing.TB, name string) {
	tb.Helper()
	if _, err := e.cl.CreateTopic(context.Background(), iggy.Name("kafka"), name, benchPartitions, iggy.TopicOptions{}); err != nil {
		tb.Fatal(err)
	}
}

// serve runs req through the dispatcher as the listener would.
func (e *benchEnv) serve(tb testing.TB, req kmsg.Request) kmsg.Response {
	var resp kmsg.Response
	var err error
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		resp, err = e.b.Produce(context.Background(), e.cc, r)
	case *kmsg.FetchRequest:
		resp, err = e.b.Fetch(context.Background(), e.cc, r)
	default:
		tb.Fatalf("%s is not a data-plane request", kmsg.NameForKey(req.Key()))
	}
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
