package tailcache

import (
	"math"
	"testing"
)

// Near the soft memory limit the cache gives memory back first: each reading at or above 90%
// of the limit halves what it may hold and evicts down to it (to nothing below 1 MiB); readings
// between 75% and 90% hold the limit; readings below 75% double it back to TAIL_CACHE_BYTES;
// without a soft limit it is TAIL_CACHE_BYTES at once.
func TestCacheShrinksUnderMemoryPressure(t *testing.T) {
	const max = 8 << 20
	c := New(max)
	batch := producerBatch(t, 16, 60<<10, -1, -1) // ~1 MiB
	for i := range 7 {
		if err := c.Put(Key{Stream: "s", Topic: "t", Partition: uint32(i)}, c.Generation(), 0, batch, -1); err != nil {
			t.Fatal(err)
		}
	}
	full := c.Stats().Bytes
	if full < 6<<20 {
		t.Fatalf("cache holds %d bytes after 7 puts of %d", full, len(batch))
	}
	const soft = 1 << 30
	high := MemoryReading{InUse: soft * 95 / 100, SoftLimit: soft}
	mid := MemoryReading{InUse: soft * 80 / 100, SoftLimit: soft}
	low := MemoryReading{InUse: soft / 2, SoftLimit: soft}
	step := func(m MemoryReading, wantLimit int) {
		t.Helper()
		c.AdjustForPressure(m)
		s := c.Stats()
		if s.Limit != wantLimit || s.Bytes > wantLimit || s.MaxLimit != max {
			t.Fatalf("after %+v: limit %d, %d bytes held (max %d); want limit %d", m, s.Limit, s.Bytes, s.MaxLimit, wantLimit)
		}
		if kept := c.recycle.freeBytes(); kept+s.Bytes > wantLimit {
			t.Fatalf("after %+v: %d bytes kept for reuse beside %d held, over the limit %d", m, kept, s.Bytes, wantLimit)
		}
	}
	step(high, max/2)
	step(mid, max/2)
	step(high, max/4)
	step(high, max/8) // 1 MiB
	step(high, 0)
	if s := c.Stats(); s.Shrinks != 4 || s.Batches != 0 {
		t.Fatalf("stats %+v, want 4 shrinks and nothing cached", s)
	}
	// Nothing is cached at a limit of 0; a Put is no error.
	if err := c.Put(Key{Stream: "s", Topic: "t"}, c.Generation(), 100, batch, -1); err != nil || c.Stats().Bytes != 0 {
		t.Fatalf("put at limit 0: %v, %d bytes held", err, c.Stats().Bytes)
	}
	step(low, pressureFloor)
	step(low, 2*pressureFloor)
	step(mid, 2*pressureFloor)
	step(MemoryReading{InUse: soft, SoftLimit: math.MaxInt64}, max)
	if err := c.Put(Key{Stream: "s", Topic: "t"}, c.Generation(), 0, batch, -1); err != nil || c.Stats().Bytes == 0 {
		t.Fatalf("put after the pressure ended: %v, %d bytes held", err, c.Stats().Bytes)
	}
}

// ReadMemory reads what the runtime counts against its soft limit.
func TestReadMemory(t *testing.T) {
	m := ReadMemory()
	if m.InUse <= 0 || m.SoftLimit <= 0 {
		t.Fatalf("%+v", m)
	}
}
