package tailcache

import (
	"math/bits"
	"sync"

	"github.com/iggygw/iggy-gateway-kafka/internal/bufpool"
)

// recycler keeps the buffers of blocks the cache let go (evicted, invalidated, released by
// their last reader) for the cache's next Puts, within what the cache may hold: free bytes
// plus held bytes stay within the limit. The shared pool (bufpool) cannot do this: it is
// emptied by garbage collections, so a cache refilling after a topic was deleted, or
// replacing what it evicts, would copy into fresh pages, which costs about ten times copying
// into memory that was written before (BenchmarkPut1MiB, docs/PERFORMANCE.md).
type recycler struct {
	limit func() int // what the cache may hold now
	held  func() int // bytes the cache holds now

	mu    sync.Mutex
	free  map[int][][]byte // by capacity, a power of two
	bytes int
}

// sizeFor is the capacity of the buffer get(n) returns.
func (r *recycler) sizeFor(n int) int {
	if n < bufpool.MinSize/2 {
		return n // the pool's smallest class would waste most of it
	}
	return 1 << bits.Len(uint(max(n, bufpool.MinSize)-1))
}

// get returns an empty buffer with a capacity of at least n bytes.
func (r *recycler) get(n int) []byte {
	size := r.sizeFor(n)
	if size < bufpool.MinSize {
		return make([]byte, 0, n)
	}
	r.mu.Lock()
	if bufs := r.free[size]; len(bufs) > 0 {
		b := bufs[len(bufs)-1]
		bufs[len(bufs)-1] = nil
		r.free[size] = bufs[:len(bufs)-1]
		r.bytes -= size
		r.mu.Unlock()
		return b[:0]
	}
	r.mu.Unlock()
	return bufpool.Get(n)
}

// put keeps b for a later get when it is of a pooled size and the cache has room for it;
// otherwise b goes to the shared pool.
func (r *recycler) put(b []byte) {
	size := cap(b)
	if size < bufpool.MinSize || size&(size-1) != 0 {
		bufpool.Put(b)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bytes+size+r.held() > r.limit() {
		bufpool.Put(b)
		return
	}
	if r.free == nil {
		r.free = make(map[int][][]byte)
	}
	r.free[size] = append(r.free[size], b[:0])
	r.bytes += size
}

// trim lets go of kept buffers until free and held bytes are within the limit again (it was
// lowered).
func (r *recycler) trim() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for size, bufs := range r.free {
		for len(bufs) > 0 && r.bytes+r.held() > r.limit() {
			bufs[len(bufs)-1] = nil
			bufs = bufs[:len(bufs)-1]
			r.bytes -= size // dropped, not pooled: the point is to give the memory back
		}
		r.free[size] = bufs
	}
}

// freeBytes is what the recycler keeps.
func (r *recycler) freeBytes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes
}
