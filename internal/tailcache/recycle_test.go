package tailcache

import (
	"runtime"
	"testing"
	"unsafe"
)

// firstByte identifies a block's memory.
func firstByte(c *Cache, k Key, from uint64) *byte {
	views, h := c.Read(k, from, 1<<62, 1, nil)
	defer h.Release()
	if len(views) == 0 {
		return nil
	}
	return unsafe.SliceData(views[0])
}

// Blocks the cache lets go (invalidated or evicted) are copied into again by later Puts,
// also after garbage collections (which empty the shared pool), and what the cache keeps
// free plus what it holds stays within its limit.
func TestPutReusesReleasedBlocks(t *testing.T) {
	batch := producerBatch(t, 100, 1024, -1, -1) // about 100 KiB: a 128 KiB block
	const limit = 1 << 20
	c := New(limit)
	seen := map[*byte]bool{}
	for i := range 8 {
		if err := c.Put(k0, c.Generation(), uint64(i)*100, batch, -1); err != nil {
			t.Fatal(err)
		}
		seen[firstByte(c, k0, uint64(i)*100)] = true
	}
	c.InvalidateTopic(k0.Stream, k0.Topic)
	if held, free := c.Stats().Bytes, c.recycle.freeBytes(); held != 0 || free == 0 || free > limit {
		t.Fatalf("after invalidation: held %d, free %d (limit %d)", held, free, limit)
	}
	runtime.GC()
	runtime.GC()
	for i := range 20 { // refill, then evict and reuse
		if err := c.Put(k0, c.Generation(), uint64(i)*100, batch, -1); err != nil {
			t.Fatal(err)
		}
		if p := firstByte(c, k0, uint64(i)*100); !seen[p] {
			t.Fatalf("put %d copied into fresh memory", i)
		}
		if held, free := c.Stats().Bytes, c.recycle.freeBytes(); held+free > limit {
			t.Fatalf("put %d: held %d + free %d over the limit %d", i, held, free, limit)
		}
	}
}

// A block a reader holds is reused only after the reader released it.
func TestHeldBlockIsNotReused(t *testing.T) {
	batch := producerBatch(t, 100, 1024, -1, -1)
	c := New(1 << 20)
	if err := c.Put(k0, 0, 0, batch, -1); err != nil {
		t.Fatal(err)
	}
	views, h := c.Read(k0, 0, 100, 1<<20, nil)
	held := unsafe.SliceData(views[0])
	c.Invalidate(k0)
	for i := range 10 {
		if err := c.Put(k0, c.Generation(), uint64(i)*100, batch, -1); err != nil {
			t.Fatal(err)
		}
		if firstByte(c, k0, uint64(i)*100) == held {
			t.Fatalf("put %d reused a block a reader holds", i)
		}
	}
	h.Release()
}

// BenchmarkRefill puts 32 MiB into a cache whose topic was deleted before two garbage
// collections (which empty the shared pool); only the puts are timed. With the cache's own
// recycler the copies land in the buffers it let go, not in fresh pages.
func BenchmarkRefill(b *testing.B) {
	batch := producerBatch(b, 1000, 1000, -1, -1) // under 1 MiB: 32 fill the cache
	c := New(32 << 20)
	b.SetBytes(int64(32 * len(batch)))
	for range b.N {
		b.StopTimer()
		c.InvalidateTopic(k0.Stream, k0.Topic)
		runtime.GC()
		runtime.GC()
		b.StartTimer()
		for i := range 32 {
			if err := c.Put(k0, c.Generation(), uint64(i)*1000, batch, -1); err != nil {
				b.Fatal(err)
			}
		}
	}
}
