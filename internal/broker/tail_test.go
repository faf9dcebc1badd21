package broker

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// writeNative appends values to partition 0 of an Iggy topic as a native Iggy client would.
func (g *gateway) writeNative(t *testing.T, ctx context.Context, topic string, values ...string) {
	t.Helper()
	for _, v := range values {
		if _, err := g.iggy.SendMessages(ctx, iggy.Name("kafka"), iggy.Name(topic), 0, []iggy.Message{{Payload: []byte(v)}}); err != nil {
			t.Fatal(err)
		}
	}
}

// produceKafka writes each group of values as one batch with a franz-go producer.
func produceKafka(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, groups ...[]string) {
	t.Helper()
	for _, values := range groups {
		recs := make([]*kgo.Record, len(values))
		for i, v := range values {
			recs[i] = &kgo.Record{Topic: topic, Partition: 0, Value: []byte(v)}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func valuesOf(recs []*kgo.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Value)
	}
	return out
}

func names(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// A franz-go consumer reads a partition written partly through the gateway (cached) and
// partly by native Iggy clients (only in Iggy), in between and before: every record exactly
// once, in order, from any start offset, including one inside a cached batch.
func TestTailCacheAcrossNativeWrites(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "tc", 1)
	ctx := ctxT(t)
	producer, _ := g.kafka(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))

	g.writeNative(t, ctx, "tc", "n0", "n1")
	produceKafka(t, ctx, producer, "tc", names("a", 0, 4), names("a", 4, 9))
	g.writeNative(t, ctx, "tc", "n2") // the gateway's next write leaves a gap in its run
	produceKafka(t, ctx, producer, "tc", names("b", 0, 3), names("b", 3, 6))
	want := append(append(append([]string{"n0", "n1"}, names("a", 0, 9)...), "n2"), names("b", 0, 6)...)

	before := g.b.Data().TailCacheStats()
	if before.Resets != 1 {
		t.Errorf("the native write between the gateway's was not noticed: %+v", before)
	}
	for _, from := range []int{0, 2, 5, 11, 14} {
		got := valuesOf(g.consume(t, ctx, "tc", 0, int64(from), len(want)-from))
		if fmt.Sprint(got) != fmt.Sprint(want[from:]) {
			t.Errorf("from %d: read %v, want %v", from, got, want[from:])
		}
	}
	after := g.b.Data().TailCacheStats()
	if after.Hits == before.Hits {
		t.Error("no fetch was served from the tail cache")
	}
	// Only the run after the native write is kept: the first batches are read from Iggy.
	if got := fetchedFrom(t, &g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "tc", 2, 0)).Topics[0].Partitions[0], 2); len(got) == 0 || string(got[0].Value) != want[2] {
		t.Fatalf("fetch from 2: %v", got)
	}
	if s := g.b.Data().TailCacheStats(); s.Hits != after.Hits {
		t.Error("the run before the native write is still served from the tail cache")
	}
}

// The consumer gets the batches as the producer compressed them, with the producer's
// fields and Iggy's offsets; with the cache off, the gateway's own uncompressed batches.
func TestTailCacheKeepsProducerCompression(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   []string
		codec int16
	}{{"cached", nil, 3}, {"off", []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=0"}, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateway(t, gatewayOpts{bridge: true, env: tc.env})
			g.mkTopic("kafka", "tz", 1)
			ctx := ctxT(t)
			producer, _ := g.kafka(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(100*time.Millisecond),
				kgo.ProducerBatchCompression(kgo.Lz4Compression()))
			g.writeNative(t, ctx, "tz", "native")
			want := names("compressible value compressible value ", 0, 40)
			produceKafka(t, ctx, producer, "tz", want)

			resp := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "tz", 3, 0))
			p := &resp.Topics[0].Partitions[0]
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(p.RecordBatches); err != nil {
				t.Fatal(err)
			}
			if codec := rb.Attributes & 7; codec != tc.codec {
				t.Errorf("batch codec %d, want %d", codec, tc.codec)
			}
			if tc.codec != 0 && (rb.FirstOffset != 1 || rb.ProducerID < 0 || rb.FirstSequence != 0) {
				t.Errorf("batch base %d, producer %d, sequence %d; want the producer's first batch at offset 1",
					rb.FirstOffset, rb.ProducerID, rb.FirstSequence)
			}
			// franz-go's decoder checks the CRC and skips the records below the fetch offset.
			fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: "tz", Offset: 3}, p, kgo.DefaultDecompressor(), nil)
			if fp.Err != nil {
				t.Fatal(fp.Err)
			}
			got := fp.Records
			if len(got) != 38 || string(got[0].Value) != want[2] || got[0].Offset != 3 || string(got[37].Value) != want[39] {
				t.Fatalf("read %d records from offset 3, first %q at %d", len(got), got[0].Value, got[0].Offset)
			}
		})
	}
}

// A topic deleted through the gateway and recreated natively holds other records at the
// same offsets: they are read from Iggy, not from the cache.
func TestTailCacheForgetsDeletedTopics(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "td", 1)
	ctx := ctxT(t)
	producer, admin := g.kafka(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	produceKafka(t, ctx, producer, "td", names("old", 0, 5))
	if _, err := admin.DeleteTopic(ctx, "td"); err != nil {
		t.Fatal(err)
	}
	g.mkTopic("kafka", "td", 1)
	g.writeNative(t, ctx, "td", names("new", 0, 5)...)
	resp := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "td", 0, 0))
	got := fetchedRecords(t, &resp.Topics[0].Partitions[0])
	if len(got) != 5 || string(got[0].Value) != "new0" || string(got[4].Value) != "new4" {
		t.Fatalf("read %d records, first %q: want the recreated topic's", len(got), got[0].Value)
	}
}

// Produce requests large enough to be read into pooled frames are cached in place, in their
// frames (tailcache.Share): with a cache small enough to evict while producing, and reads
// from many offsets, every record comes back intact (franz-go checks each batch's CRC) and
// in order, so no frame went back to the pool while the cache or a response still used it.
// With frames larger than the whole cache, the batches are copied from frames that stay
// intact until the request's sends are done.
func TestTailCacheKeepsRequestFrames(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cache      string
		cacheBytes int
		batchBytes int32
		// copies: some batches are copied (their frames are larger than the cache) rather
		// than all cached in place.
		copies bool
	}{
		{"in place", "1MiB", 1 << 20, 64 << 10, false},
		{"frames larger than the cache", "32KiB", 32 << 10, 24 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=" + tc.cache}})
			g.mkTopic("kafka", "frames", 3)
			ctx := ctxT(t)
			producer, _ := g.kafka(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond),
				kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(tc.batchBytes))
			const perPartition = 1000
			value := func(p, i int) []byte {
				return bytes.Repeat([]byte(fmt.Sprintf("p%d-r%04d;", p, i)), 200) // 2 KiB
			}
			for i := range perPartition {
				for p := range 3 {
					producer.Produce(ctx, &kgo.Record{Topic: "frames", Partition: int32(p), Value: value(p, i)}, func(_ *kgo.Record, err error) {
						if err != nil {
							t.Errorf("produce: %v", err)
						}
					})
				}
			}
			if err := producer.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			s := g.b.Data().TailCacheStats()
			// A request the producer's linger cut small (a frame under the pool's 16 KiB) is
			// copied even when the others are cached in place.
			cached := s.Evictions + uint64(s.Batches)
			inPlace := s.InPlace >= cached*9/10
			if inPlace == tc.copies || s.Evictions == 0 {
				t.Fatalf("stats %+v: want copies %v (else nearly all batches cached in their frames), and evictions", s, tc.copies)
			}
			if s.Bytes > tc.cacheBytes {
				t.Fatalf("the cache holds %d bytes, over its budget of %d", s.Bytes, tc.cacheBytes)
			}
			for p := range 3 {
				for _, from := range []int{0, perPartition / 2, perPartition * 4 / 5, perPartition * 9 / 10, perPartition - 7} {
					got := g.consume(t, ctx, "frames", int32(p), int64(from), perPartition-from)
					for i, r := range got[:perPartition-from] {
						if want := value(p, from+i); !bytes.Equal(r.Value, want) || r.Offset != int64(from+i) {
							t.Fatalf("partition %d from %d: record at offset %d is %.12q, want offset %d %.12q", p, from, r.Offset, r.Value, from+i, want)
						}
					}
				}
			}
			if g.b.Data().TailCacheStats().Hits == s.Hits {
				t.Error("no fetch was served from the tail cache")
			}
		})
	}
}
