// Package tailcache keeps the Kafka record batches this gateway wrote most recently, as the
// producers sent them (still compressed, with their producer fields) and with their base
// offsets rewritten to the offsets Iggy assigned, so that Fetch can answer consumers at the
// tail of a partition without reading Iggy or touching a record (docs/PERFORMANCE.md, "Tail
// cache").
//
// Correctness rests on one rule: a partition's cached batches form one contiguous run of
// offsets that Iggy confirmed to this gateway's own writes. A write confirmed at any other
// offset than the run's end (another writer appended in between, or confirmations arrived out
// of order) starts a new run; whatever is not in the run is read from Iggy. Anything that can
// change what Iggy holds at an offset (topic deletion, truncation, purges) must call
// Invalidate or InvalidateTopic.
package tailcache

import (
	"container/list"
	"encoding/binary"
	"errors"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/iggygw/iggy-gateway-kafka/internal/bufpool"
)

// Offsets in a v2 record batch header (Kafka's DefaultRecordBatch). The CRC covers the bytes
// from the attributes on, so the base offset and the partition leader epoch can be rewritten
// without recomputing it.
const (
	offBaseOffset      = 0
	offLength          = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offLastOffsetDelta = 23
	offNumRecords      = 57
	headerSize         = 61
	lengthFieldEnd     = 12
)

// ErrNotCacheable is returned by Put for batches whose records do not occupy consecutive
// offsets from the batch's base (or that are not well-formed v2 batches): their offsets as
// Iggy stored them cannot be told from the batch header alone.
var ErrNotCacheable = errors.New("tailcache: batches cannot be cached")

// Key names one partition.
type Key struct {
	Stream, Topic string
	Partition     uint32
}

// Cache holds the recent batches of many partitions within a byte budget, evicting the
// oldest batches of any partition first. A nil *Cache is a cache that is off: it keeps
// nothing and finds nothing. It is safe for concurrent use.
type Cache struct {
	// max is the configured limit (TAIL_CACHE_BYTES); limit is what the cache may hold now:
	// max, or less while the process is near its soft memory limit (pressure.go). limit is
	// read without mu (Put, Share) and written under it.
	max   int
	limit atomic.Int64

	mu         sync.Mutex
	parts      map[Key]*run
	order      list.List // *entry, oldest first
	bytes      int
	generation uint64 // bumped by every invalidation
	stats      Stats
	// held mirrors bytes for the recycler, which must not take mu: blocks are let go under it.
	held    atomic.Int64
	recycle *recycler
}

// run is one partition's contiguous cached batches, in offset order.
type run struct {
	entries []*entry
}

// entry is one cached batch holding offsets [base, end).
type entry struct {
	key       Key
	base, end uint64
	data      []byte // in blk
	blk       *block
	elem      *list.Element
}

// block is a buffer cached batches live in: the copy one Put made, or a buffer shared by
// several Puts (Share: a Produce request's frame). The budget counts a block's whole capacity
// while any of its batches is cached. It is let go once no entry, reader or sharer refers to
// it: a copy's buffer to the cache's recycler (copying into recycled memory costs a tenth of
// copying into fresh pages, BenchmarkPut1MiB), a shared one to the shared pool it came from.
type block struct {
	buf     []byte
	refs    atomic.Int32 // entries in the cache, readers' holds and the sharer
	cached  int          // entries in the cache, under the cache's mu
	recycle *recycler    // nil: the buffer goes back to bufpool
}

func (b *block) unref() {
	if b.refs.Add(-1) == 0 {
		if b.recycle != nil {
			b.recycle.put(b.buf)
		} else {
			bufpool.Put(b.buf)
		}
	}
}

// Stats counts what the cache did, for metrics and tests.
type Stats struct {
	Hits, Misses  uint64 // Read calls that found or did not find the offset
	Batches       int    // batches held
	Bytes         int    // bytes held
	Limit         int    // bytes it may hold now: MaxLimit, or less under memory pressure
	MaxLimit      int    // bytes it may hold without memory pressure (TAIL_CACHE_BYTES)
	Shrinks       uint64 // times the limit was lowered for memory pressure (pressure.go)
	Evictions     uint64 // batches evicted for room
	Resets        uint64 // runs restarted because a write did not continue them
	Invalidations uint64
	InPlace       uint64 // batches cached where they lay, in a shared buffer (PutShared)
}

// New returns a cache holding at most limit bytes of batches; nil (off) when limit <= 0.
func New(limit int) *Cache {
	if limit <= 0 {
		return nil
	}
	c := &Cache{max: limit, parts: make(map[Key]*run)}
	c.limit.Store(int64(limit))
	c.recycle = &recycler{limit: c.currentLimit, held: func() int { return int(c.held.Load()) }}
	return c
}

// Generation is a token to take before a write whose batches will be Put: a Put with a
// token taken before an invalidation is dropped, since the write may have gone to what was
// invalidated (a topic deleted meanwhile).
func (c *Cache) Generation() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.generation
}

// Put caches batches, one or more v2 record batches as a producer sent them for k, whose
// records Iggy stored at consecutive offsets from base. The batches are copied; each copy's
// base offset becomes the offset of its first record and its partition leader epoch becomes
// leaderEpoch. The caller has checked the batches' framing and CRCs, and that each batch's
// records carry offset deltas 0, 1, 2, … (Put checks the header's counts agree).
//
// When base is not where k's run ends, someone else wrote in between (or confirmations came
// out of order): the run restarts with these batches. Batches larger than the whole budget
// are not kept and end the run.
func (c *Cache) Put(k Key, gen uint64, base uint64, batches []byte, leaderEpoch int32) error {
	if c == nil {
		return nil
	}
	if size := c.recycle.sizeFor(len(batches)); size <= c.currentLimit() {
		c.makeRoom(size)
	}
	blk := &block{buf: append(c.recycle.get(len(batches)), batches...), recycle: c.recycle}
	blk.refs.Store(1) // this Put's, until it returns
	defer blk.unref()
	return c.putIn(blk, k, gen, base, blk.buf, leaderEpoch)
}

// Shared is a buffer whose batches Puts cache in place, without copying (PutShared): the
// frame a Produce request was read into, whose partitions are confirmed one by one. The
// cache counts the buffer's whole capacity against its budget while any of its batches is
// cached, and hands it back to the shared pool (bufpool) once neither the cache, a reader
// nor the sharer refers to it.
type Shared struct{ blk *block }

// Share takes buf, a buffer from bufpool, for PutShared; the caller gives up buf (it must
// not use it but through PutShared) and calls Release when it will put no more. Nil when the
// cache is off or buf is larger than the whole budget: PutShared and Release of a nil
// *Shared do nothing.
func (c *Cache) Share(buf []byte) *Shared {
	if c == nil || cap(buf) > c.currentLimit() {
		return nil
	}
	blk := &block{buf: buf}
	blk.refs.Store(1)
	return &Shared{blk: blk}
}

// Release ends the sharer's use of the buffer; batches PutShared cached stay cached.
func (s *Shared) Release() {
	if s != nil {
		s.blk.unref()
	}
}

// PutShared is Put without the copy: batches lie in s's buffer and are rewritten there (base
// offsets and leader epochs) and kept as they are. Nothing else may read or write those bytes
// afterwards. With a nil s it does nothing; the caller then Puts a copy.
func (c *Cache) PutShared(s *Shared, k Key, gen uint64, base uint64, batches []byte, leaderEpoch int32) error {
	if c == nil || s == nil {
		return nil
	}
	return c.putIn(s.blk, k, gen, base, batches, leaderEpoch)
}

// putIn caches batches, which lie in blk's buffer, for k.
func (c *Cache) putIn(blk *block, k Key, gen uint64, base uint64, batches []byte, leaderEpoch int32) error {
	entries, err := rewrite(k, batches, base, leaderEpoch)
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.parts[k]
	switch {
	case gen != c.generation:
		return nil
	case err != nil || cap(blk.buf) > c.currentLimit():
		if r != nil {
			c.dropRunLocked(k, r)
		}
		return err
	}
	if r == nil {
		r = &run{}
		c.parts[k] = r
	} else if r.entries[len(r.entries)-1].end != base {
		c.stats.Resets++
		c.clearRunLocked(r)
	}
	if blk.recycle == nil {
		c.stats.InPlace += uint64(len(entries))
	}
	blk.refs.Add(int32(len(entries)))
	if blk.cached == 0 {
		c.bytes += cap(blk.buf)
		c.held.Add(int64(cap(blk.buf)))
	}
	blk.cached += len(entries)
	for _, e := range entries {
		e.blk = blk
		e.elem = c.order.PushBack(e)
		r.entries = append(r.entries, e)
	}
	for c.bytes > c.currentLimit() {
		c.evictOldestLocked()
	}
	return nil
}

// currentLimit is what the cache may hold now.
func (c *Cache) currentLimit() int { return int(c.limit.Load()) }

// rewrite splits data into its batches and rewrites their base offsets and leader epochs.
func rewrite(k Key, data []byte, base uint64, leaderEpoch int32) ([]*entry, error) {
	var entries []*entry
	be := binary.BigEndian
	next := base
	for rest := data; len(rest) > 0; {
		if len(rest) < headerSize {
			return nil, ErrNotCacheable
		}
		size := lengthFieldEnd + int(int32(be.Uint32(rest[offLength:])))
		if size < headerSize || size > len(rest) || rest[offMagic] != 2 {
			return nil, ErrNotCacheable
		}
		n := int32(be.Uint32(rest[offNumRecords:]))
		if n <= 0 || int32(be.Uint32(rest[offLastOffsetDelta:])) != n-1 {
			return nil, ErrNotCacheable
		}
		b := rest[:size:size]
		be.PutUint64(b[offBaseOffset:], next)
		be.PutUint32(b[offLeaderEpoch:], uint32(leaderEpoch))
		entries = append(entries, &entry{key: k, base: next, end: next + uint64(n), data: b})
		next += uint64(n)
		rest = rest[size:]
	}
	if len(entries) == 0 {
		return nil, ErrNotCacheable
	}
	return entries, nil
}

// Hold keeps the batches returned by Read valid until Release.
type Hold struct {
	blocks []*block
}

// Release lets the held batches' memory be reused; they must not be used afterwards. It is
// idempotent, and the zero Hold's does nothing.
func (h *Hold) Release() {
	for _, b := range h.blocks {
		b.unref()
	}
	h.blocks = nil
}

// Read appends to dst the cached batches of k from the one holding offset from, in order,
// while they end at or before end (the high watermark the caller may serve up to) and their
// total stays within limit; the first batch is appended whatever its size. It appends
// nothing when offset from is not cached. The slices must not be modified, and are valid
// until the returned Hold is released (eviction does not end them).
func (c *Cache) Read(k Key, from, end uint64, limit int, dst [][]byte) ([][]byte, Hold) {
	if c == nil {
		return dst, Hold{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.parts[k]
	if r == nil {
		c.stats.Misses++
		return dst, Hold{}
	}
	i := sort.Search(len(r.entries), func(i int) bool { return r.entries[i].end > from })
	if i == len(r.entries) || r.entries[i].base > from || r.entries[i].end > end {
		c.stats.Misses++
		return dst, Hold{}
	}
	c.stats.Hits++
	var h Hold
	total := 0
	for _, e := range r.entries[i:] {
		if e.end > end || (total > 0 && total+len(e.data) > limit) {
			break
		}
		dst = append(dst, e.data)
		total += len(e.data)
		if n := len(h.blocks); n == 0 || h.blocks[n-1] != e.blk {
			e.blk.refs.Add(1)
			h.blocks = append(h.blocks, e.blk)
		}
	}
	return dst, h
}

// Invalidate forgets k's batches: what Iggy holds at their offsets may have changed.
func (c *Cache) Invalidate(k Key) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	c.stats.Invalidations++
	if r := c.parts[k]; r != nil {
		c.dropRunLocked(k, r)
	}
}

// InvalidateTopic forgets the batches of every partition of an Iggy topic (deleted, purged
// or recreated).
func (c *Cache) InvalidateTopic(stream, topic string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	c.stats.Invalidations++
	for k, r := range c.parts {
		if k.Stream == stream && k.Topic == topic {
			c.dropRunLocked(k, r)
		}
	}
}

// Stats returns the counters and what the cache holds now.
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Batches, s.Bytes, s.Limit, s.MaxLimit = c.order.Len(), c.bytes, c.currentLimit(), c.max
	return s
}

func (c *Cache) clearRunLocked(r *run) {
	for _, e := range r.entries {
		c.order.Remove(e.elem)
		c.uncacheLocked(e)
	}
	clear(r.entries)
	r.entries = r.entries[:0]
}

func (c *Cache) dropRunLocked(k Key, r *run) {
	c.clearRunLocked(r)
	delete(c.parts, k)
}

// makeRoom evicts the oldest batches until a buffer of size bytes fits within the limit, so
// that a full cache copies the next batches into the buffers it evicts rather than into
// fresh memory.
func (c *Cache) makeRoom(size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.bytes+size > c.currentLimit() && c.order.Len() > 0 {
		c.evictOldestLocked()
	}
}

// evictOldestLocked drops the oldest cached batch. It is the first of its run: runs are
// appended in order and eviction takes the oldest first.
func (c *Cache) evictOldestLocked() {
	e := c.order.Remove(c.order.Front()).(*entry)
	c.uncacheLocked(e)
	c.stats.Evictions++
	r := c.parts[e.key]
	r.entries[0] = nil
	r.entries = r.entries[1:]
	if len(r.entries) == 0 {
		delete(c.parts, e.key)
	}
}

// uncacheLocked lets go of e's batch: its block stops counting against the budget with its
// last cached batch.
func (c *Cache) uncacheLocked(e *entry) {
	if e.blk.cached--; e.blk.cached == 0 {
		c.bytes -= cap(e.blk.buf)
		c.held.Add(-int64(cap(e.blk.buf)))
	}
	e.blk.unref()
}
