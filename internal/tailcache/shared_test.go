package tailcache

import (
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/bufpool"
)

// frameWith lays batches out in one pooled buffer after a few header bytes, as a Produce
// request frame holds its partitions' batches, and returns the buffer and each batch's slice.
func frameWith(batches ...[]byte) ([]byte, [][]byte) {
	frame := bufpool.Get(1 << 16)
	frame = append(frame, "request header"...)
	var views [][]byte
	for _, b := range batches {
		start := len(frame)
		frame = append(frame, b...)
		views = append(views, frame[start:len(frame):len(frame)])
	}
	return frame, views
}

// TestPutSharedCachesInPlace: the batches of several partitions in one shared buffer are
// cached without a copy (reads return the buffer's own bytes, rewritten), the budget counts
// the buffer once, and the sharer's Release leaves them cached.
func TestPutSharedCachesInPlace(t *testing.T) {
	c := New(1 << 20)
	k1 := Key{Stream: "s", Topic: "t", Partition: 1}
	frame, views := frameWith(producerBatch(t, 3, 50, 7, 0), producerBatch(t, 2, 50, 7, 0))
	s := c.Share(frame)
	if err := c.PutShared(s, k0, c.Generation(), 100, views[0], 4); err != nil {
		t.Fatal(err)
	}
	if err := c.PutShared(s, k1, c.Generation(), 200, views[1], 4); err != nil {
		t.Fatal(err)
	}
	s.Release()
	if st := c.Stats(); st.Bytes != cap(frame) || st.Batches != 2 || st.InPlace != 2 {
		t.Fatalf("stats %+v, want the buffer's capacity %d counted once for 2 batches", st, cap(frame))
	}
	got, h := c.Read(k1, 200, 202, 1<<20, nil)
	defer h.Release()
	if len(got) != 1 || &got[0][0] != &views[1][0] {
		t.Fatal("the read batch is not the shared buffer's own")
	}
	if b := decode(t, got[0]); b.FirstOffset != 200 || b.PartitionLeaderEpoch != 4 || b.ProducerID != 7 {
		t.Errorf("batch base %d epoch %d producer %d, want 200, 4, 7", b.FirstOffset, b.PartitionLeaderEpoch, b.ProducerID)
	}
	if b := decode(t, read(c, k0, 101, 103, 1<<20, nil)[0]); b.FirstOffset != 100 {
		t.Errorf("k0 batch base %d, want 100", b.FirstOffset)
	}
}

// TestSharedBufferLifetime: the shared buffer is let go only when the sharer, every cached
// batch and every reader are done with it, and the budget stops counting it with its last
// cached batch.
func TestSharedBufferLifetime(t *testing.T) {
	c := New(1 << 20)
	k1 := Key{Stream: "s", Topic: "t", Partition: 1}
	frame, views := frameWith(producerBatch(t, 3, 50, -1, -1), producerBatch(t, 2, 50, -1, -1))
	s := c.Share(frame)
	blk := s.blk
	for i, k := range []Key{k0, k1} {
		if err := c.PutShared(s, k, c.Generation(), 0, views[i], -1); err != nil {
			t.Fatal(err)
		}
	}
	_, h := c.Read(k0, 0, 3, 1<<20, nil)
	c.Invalidate(k0)
	if st := c.Stats(); st.Bytes != cap(frame) {
		t.Fatalf("holds %d bytes with k1's batch still cached, want %d", st.Bytes, cap(frame))
	}
	c.Invalidate(k1)
	if st := c.Stats(); st.Bytes != 0 || st.Batches != 0 {
		t.Fatalf("stats %+v after both partitions were invalidated, want nothing held", st)
	}
	if n := blk.refs.Load(); n != 2 {
		t.Fatalf("refs %d, want the sharer's and the reader's", n)
	}
	s.Release()
	h.Release()
	if n := blk.refs.Load(); n != 0 {
		t.Fatalf("refs %d after every user let go, want 0", n)
	}
	// A Put whose generation is stale caches nothing and keeps no reference.
	frame2, views2 := frameWith(producerBatch(t, 1, 10, -1, -1))
	s2 := c.Share(frame2)
	gen := c.Generation()
	c.InvalidateTopic("s", "t")
	if err := c.PutShared(s2, k0, gen, 0, views2[0], -1); err != nil {
		t.Fatal(err)
	}
	s2.Release()
	if n := s2.blk.refs.Load(); n != 0 || c.Stats().Batches != 0 {
		t.Fatalf("stale put: refs %d, %d batches cached", n, c.Stats().Batches)
	}
}

// TestSharedBuffersKeepWithinTheBudget: shared buffers count their whole capacity, and the
// oldest batches are evicted until the buffers still in use fit.
func TestSharedBuffersKeepWithinTheBudget(t *testing.T) {
	frameCap := cap(bufpool.Get(1 << 16))
	c := New(2 * frameCap)
	for i := range 5 {
		frame, views := frameWith(producerBatch(t, 2, 100, -1, -1))
		s := c.Share(frame)
		if err := c.PutShared(s, k0, c.Generation(), uint64(2*i), views[0], -1); err != nil {
			t.Fatal(err)
		}
		s.Release()
		if st := c.Stats(); st.Bytes > 2*frameCap {
			t.Fatalf("put %d: holds %d bytes, over the budget %d", i, st.Bytes, 2*frameCap)
		}
	}
	if got := read(c, k0, 6, 10, 1<<20, nil); len(got) != 2 {
		t.Errorf("read %d of the 2 newest batches", len(got))
	}
	if c.Share(make([]byte, 0, 4*frameCap)) != nil {
		t.Error("a buffer larger than the budget was shared")
	}
	var off *Cache
	if off.Share(bufpool.Get(1<<16)) != nil {
		t.Error("a cache that is off shared a buffer")
	}
}

// BenchmarkFramePut is what a 1 MiB partition costs from its request frame into the cache: a
// frame read into a pooled buffer (the copy stands in for the socket read), then either
// copied into the cache and the frame put back (Put) or cached in place (PutShared).
func BenchmarkFramePut(b *testing.B) {
	batch := producerBatch(b, 1000, 1024, -1, -1)
	for _, shared := range []bool{false, true} {
		name := "copy"
		if shared {
			name = "shared"
		}
		b.Run(name, func(b *testing.B) {
			c := New(64 << 20)
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for i := range b.N {
				frame := append(bufpool.Get(len(batch)), batch...)
				if !shared {
					if err := c.Put(k0, 0, uint64(i)*1000, frame, -1); err != nil {
						b.Fatal(err)
					}
					bufpool.Put(frame)
					continue
				}
				s := c.Share(frame)
				if err := c.PutShared(s, k0, 0, uint64(i)*1000, frame, -1); err != nil {
					b.Fatal(err)
				}
				s.Release()
			}
		})
	}
}
