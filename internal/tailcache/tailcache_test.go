package tailcache

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// producerBatch is a v2 batch of n uncompressed records as a producer sends it: base offset
// 0, leader epoch -1, the given producer fields, and a valid CRC.
func producerBatch(t testing.TB, n int, valueSize int, producerID int64, seq int32) []byte {
	t.Helper()
	var records []byte
	for i := range n {
		r := kmsg.NewRecord()
		r.OffsetDelta = int32(i)
		r.TimestampDelta64 = int64(i)
		r.Value = bytes.Repeat([]byte{byte('a' + i%26)}, valueSize)
		r.Key = []byte{byte(i)}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // the zero length varint takes one byte
		records = r.AppendTo(records)
	}
	b := kmsg.NewRecordBatch()
	b.PartitionLeaderEpoch = -1
	b.Magic = 2
	b.LastOffsetDelta = int32(n - 1)
	b.FirstTimestamp = 1_700_000_000_000
	b.MaxTimestamp = b.FirstTimestamp + int64(n-1)
	b.ProducerID, b.ProducerEpoch, b.FirstSequence = producerID, 3, seq
	b.NumRecords = int32(n)
	b.Records = records
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[offLength:], uint32(len(raw)-lengthFieldEnd))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], castagnoli))
	return raw
}

// decode reads one batch as a Kafka client would, checking its CRC.
func decode(t *testing.T, raw []byte) kmsg.RecordBatch {
	t.Helper()
	var b kmsg.RecordBatch
	if err := b.ReadFrom(raw); err != nil {
		t.Fatalf("decode batch: %v", err)
	}
	if got := crc32.Checksum(raw[21:], castagnoli); got != uint32(b.CRC) {
		t.Fatalf("CRC %08x, batch says %08x", got, uint32(b.CRC))
	}
	return b
}

var k0 = Key{Stream: "s", Topic: "t", Partition: 0}

// read is Read for tests that do not keep the batches past the next Put.
func read(c *Cache, k Key, from, end uint64, limit int, dst [][]byte) [][]byte {
	views, h := c.Read(k, from, end, limit, dst)
	h.Release()
	return views
}

func TestPutRewritesOffsetsAndEpochKeepingCRC(t *testing.T) {
	c := New(1 << 20)
	a, b := producerBatch(t, 3, 10, 42, 7), producerBatch(t, 5, 10, 42, 10)
	sent := append(append([]byte(nil), a...), b...)
	orig := append([]byte(nil), sent...)
	if err := c.Put(k0, c.Generation(), 100, sent, 4); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sent, orig) {
		t.Fatal("Put modified the caller's bytes")
	}
	got := read(c, k0, 100, 108, 1<<20, nil)
	if len(got) != 2 {
		t.Fatalf("read %d batches, want 2", len(got))
	}
	for i, want := range []struct {
		base int64
		n    int32
		seq  int32
	}{{100, 3, 7}, {103, 5, 10}} {
		rb := decode(t, got[i])
		if rb.FirstOffset != want.base || rb.NumRecords != want.n || rb.PartitionLeaderEpoch != 4 {
			t.Errorf("batch %d: base %d, %d records, epoch %d; want base %d, %d records, epoch 4",
				i, rb.FirstOffset, rb.NumRecords, rb.PartitionLeaderEpoch, want.base, want.n)
		}
		if rb.ProducerID != 42 || rb.ProducerEpoch != 3 || rb.FirstSequence != want.seq {
			t.Errorf("batch %d: producer fields %d/%d/%d changed", i, rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence)
		}
	}
	// Everything but the base offset and the epoch is the producer's.
	if !bytes.Equal(got[0][lengthFieldEnd+4:], a[lengthFieldEnd+4:]) {
		t.Error("batch body differs from the producer's")
	}
}

func TestReadFindsTheBatchHoldingTheOffset(t *testing.T) {
	c := New(1 << 20)
	for _, base := range []uint64{10, 14, 18} {
		if err := c.Put(k0, c.Generation(), base, producerBatch(t, 4, 8, -1, -1), -1); err != nil {
			t.Fatal(err)
		}
	}
	size := len(producerBatch(t, 4, 8, -1, -1))
	for _, tc := range []struct {
		name      string
		from, end uint64
		limit     int
		bases     []int64
	}{
		{"at a batch start", 14, 22, 1 << 20, []int64{14, 18}},
		{"inside a batch", 16, 22, 1 << 20, []int64{14, 18}},
		{"up to the high watermark only", 10, 18, 1 << 20, []int64{10, 14}},
		{"batch past the high watermark", 19, 20, 1 << 20, nil},
		{"limit after the first", 10, 22, size + 1, []int64{10}},
		{"first whatever its size", 10, 22, 1, []int64{10}},
		{"before the run", 9, 22, 1 << 20, nil},
		{"at the run's end", 22, 30, 1 << 20, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := read(c, k0, tc.from, tc.end, tc.limit, nil)
			if len(got) != len(tc.bases) {
				t.Fatalf("read %d batches, want %d", len(got), len(tc.bases))
			}
			for i, raw := range got {
				if base := decode(t, raw).FirstOffset; base != tc.bases[i] {
					t.Errorf("batch %d at %d, want %d", i, base, tc.bases[i])
				}
			}
		})
	}
	if other := read(c, Key{Stream: "s", Topic: "t", Partition: 1}, 10, 22, 1<<20, nil); len(other) != 0 {
		t.Error("another partition read k0's batches")
	}
}

func TestGapRestartsTheRun(t *testing.T) {
	c := New(1 << 20)
	put := func(base uint64) {
		t.Helper()
		if err := c.Put(k0, c.Generation(), base, producerBatch(t, 5, 8, -1, -1), -1); err != nil {
			t.Fatal(err)
		}
	}
	put(0)
	put(5)
	// A native Iggy client wrote offsets 10-12: the next confirmed write starts at 13.
	put(13)
	if got := read(c, k0, 10, 18, 1<<20, nil); len(got) != 0 {
		t.Fatal("served offsets another writer wrote")
	}
	if got := read(c, k0, 0, 18, 1<<20, nil); len(got) != 0 {
		t.Fatal("kept the run before the gap: a read could cross it")
	}
	if got := read(c, k0, 14, 18, 1<<20, nil); len(got) != 1 || decode(t, got[0]).FirstOffset != 13 {
		t.Fatal("the new run is not served")
	}
	// Confirmations out of order (an earlier offset after a later one) restart it too.
	put(3)
	if got := read(c, k0, 13, 18, 1<<20, nil); len(got) != 0 {
		t.Fatal("run kept across an out-of-order write")
	}
	if s := c.Stats(); s.Resets != 2 || s.Batches != 1 {
		t.Errorf("stats %+v, want 2 resets and 1 batch", s)
	}
}

func TestEvictionKeepsWithinTheBudget(t *testing.T) {
	size := len(producerBatch(t, 2, 100, -1, -1))
	c := New(3*size + size/2)
	k1 := Key{Stream: "s", Topic: "t", Partition: 1}
	for i := range 4 {
		for _, k := range []Key{k0, k1} {
			if err := c.Put(k, c.Generation(), uint64(2*i), producerBatch(t, 2, 100, -1, -1), -1); err != nil {
				t.Fatal(err)
			}
			if s := c.Stats(); s.Bytes > 3*size+size/2 {
				t.Fatalf("holds %d bytes, over the budget %d", s.Bytes, 3*size+size/2)
			}
		}
	}
	// The three newest batches remain: k1's [4,6), k0's and k1's [6,8).
	if got := read(c, k0, 6, 8, 1<<20, nil); len(got) != 1 {
		t.Error("newest batch of k0 evicted")
	}
	if got := read(c, k0, 4, 8, 1<<20, nil); len(got) != 0 {
		t.Error("older batch of k0 kept")
	}
	if got := read(c, k1, 4, 8, 1<<20, nil); len(got) != 2 {
		t.Errorf("k1 read %d batches, want 2", len(got))
	}
	if s := c.Stats(); s.Batches != 3 || s.Evictions != 5 || s.Bytes != 3*size {
		t.Errorf("stats %+v, want 3 batches, 5 evictions, %d bytes", s, 3*size)
	}
	// A batch larger than the whole budget is not kept, and the run it would continue ends.
	if err := c.Put(k1, c.Generation(), 8, producerBatch(t, 40, 100, -1, -1), -1); err != nil {
		t.Fatal(err)
	}
	if got := read(c, k1, 4, 48, 1<<20, nil); len(got) != 0 {
		t.Error("run kept past a batch that was not cached")
	}
}

func TestInvalidation(t *testing.T) {
	c := New(1 << 20)
	k1 := Key{Stream: "s", Topic: "t", Partition: 1}
	other := Key{Stream: "s", Topic: "u", Partition: 0}
	for _, k := range []Key{k0, k1, other} {
		if err := c.Put(k, c.Generation(), 0, producerBatch(t, 2, 8, -1, -1), -1); err != nil {
			t.Fatal(err)
		}
	}
	c.Invalidate(k0)
	if len(read(c, k0, 0, 2, 1<<20, nil)) != 0 || len(read(c, k1, 0, 2, 1<<20, nil)) != 1 {
		t.Fatal("Invalidate(k0) did not forget k0 alone")
	}
	gen := c.Generation() // a write starts...
	c.InvalidateTopic("s", "t")
	if len(read(c, k1, 0, 2, 1<<20, nil)) != 0 || len(read(c, other, 0, 2, 1<<20, nil)) != 1 {
		t.Fatal("InvalidateTopic did not forget that topic alone")
	}
	// ...and is confirmed after the invalidation: it may have gone to the deleted topic.
	if err := c.Put(k1, gen, 2, producerBatch(t, 2, 8, -1, -1), -1); err != nil {
		t.Fatal(err)
	}
	if len(read(c, k1, 2, 4, 1<<20, nil)) != 0 {
		t.Fatal("a write begun before an invalidation was cached")
	}
	if s := c.Stats(); s.Bytes != len(producerBatch(t, 2, 8, -1, -1)) || s.Batches != 1 {
		t.Errorf("stats %+v after invalidations", s)
	}
}

func TestPutRefusesBatchesItCannotPlace(t *testing.T) {
	good := producerBatch(t, 3, 8, -1, -1)
	gaps := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(gaps[offLastOffsetDelta:], 5) // 3 records over 6 offsets
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"short header", good[:headerSize-1]},
		{"truncated", good[:len(good)-1]},
		{"offset deltas with gaps", gaps},
		{"magic 1", func() []byte { b := append([]byte(nil), good...); b[offMagic] = 1; return b }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(1 << 20)
			if err := c.Put(k0, 0, 0, good, -1); err != nil {
				t.Fatal(err)
			}
			if err := c.Put(k0, 0, 3, tc.data, -1); err == nil {
				t.Fatal("Put accepted it")
			}
			if s := c.Stats(); s.Batches != 0 || s.Bytes != 0 {
				t.Errorf("stats %+v: the run must end where an uncacheable write went", s)
			}
		})
	}
}

// Batches held by a reader keep their bytes while the cache evicts them and reuses memory.
func TestHeldBatchesOutliveEviction(t *testing.T) {
	batch := producerBatch(t, 200, 1024, -1, -1) // pooled: larger than the smallest class
	c := New(len(batch) * 2)
	if err := c.Put(k0, 0, 0, batch, -1); err != nil {
		t.Fatal(err)
	}
	views, h := c.Read(k0, 0, 200, 1<<30, nil)
	want := append([]byte(nil), views[0]...)
	for i := range 20 {
		other := producerBatch(t, 200, 1024, int64(i), 0) // different bytes
		if err := c.Put(Key{Partition: 9}, 0, uint64(i)*200, other, 7); err != nil {
			t.Fatal(err)
		}
	}
	if s := c.Stats(); s.Batches > 2 || len(read(c, k0, 0, 200, 1<<30, nil)) != 0 {
		t.Fatalf("the held batch was not evicted from the cache: %+v", s)
	}
	if !bytes.Equal(views[0], want) {
		t.Fatal("a held batch changed after its eviction")
	}
	h.Release()
	h.Release() // idempotent
}

func TestNilCacheIsOff(t *testing.T) {
	var c *Cache = New(0)
	if c != nil {
		t.Fatal("New(0) is not off")
	}
	if err := c.Put(k0, c.Generation(), 0, producerBatch(t, 1, 8, -1, -1), -1); err != nil {
		t.Fatal(err)
	}
	if len(read(c, k0, 0, 1, 1<<20, nil)) != 0 {
		t.Fatal("an off cache found a batch")
	}
	c.Invalidate(k0)
	c.InvalidateTopic("s", "t")
	if c.Stats() != (Stats{}) {
		t.Fatal("an off cache has stats")
	}
}

func BenchmarkPut1MiB(b *testing.B) {
	batch := producerBatch(b, 1000, 1024, -1, -1)
	c := New(64 << 20)
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for i := range b.N {
		if err := c.Put(k0, 0, uint64(i)*1000, batch, -1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	c := New(256 << 20)
	for i := range 1000 {
		if err := c.Put(k0, 0, uint64(i)*10, producerBatch(b, 10, 1024, -1, -1), -1); err != nil {
			b.Fatal(err)
		}
	}
	dst := make([][]byte, 0, 128)
	b.ReportAllocs()
	for i := range b.N {
		var h Hold
		dst, h = c.Read(k0, uint64(i%9000), 10000, 1<<20, dst[:0])
		h.Release()
	}
}
