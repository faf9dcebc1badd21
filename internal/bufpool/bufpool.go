// Package bufpool keeps large byte buffers for reuse across requests, in power-of-two size
// classes, so the data path (request frames, Iggy poll replies, Fetch record batches and
// response buffers) does not allocate, zero and collect megabytes per request. Buffers in the
// pool are dropped by the garbage collector when they stay unused, so an idle gateway gives
// the memory back.
//
// The rule that keeps this safe: Put a buffer only when nothing refers to any part of it any
// more. A buffer that is never Put is simply collected; when in doubt, do not Put.
package bufpool

import (
	"math/bits"
	"sync"
)

const (
	// MinSize is the smallest buffer worth pooling; Get hands out at least this much.
	MinSize   = 16 << 10
	minClass  = 14 // log2(MinSize)
	maxClass  = 26 // 64 MiB: larger buffers are left to the garbage collector
	numClass  = maxClass - minClass + 1
	maxPooled = 1 << maxClass
)

var pools [numClass]sync.Pool

// Get returns an empty buffer with a capacity of at least n bytes. Its contents are not
// zeroed: write before reading.
func Get(n int) []byte {
	if n > maxPooled {
		return make([]byte, 0, n)
	}
	c := class(n)
	if p, ok := pools[c-minClass].Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, 1<<c)
}

// SizeFor is the capacity Get(n) allocates when its class has no buffer to reuse: what a
// caller that accounts for memory reserves before calling Get (a reused buffer may be larger,
// up to twice that, and is memory the process holds already).
func SizeFor(n int) int {
	if n > maxPooled {
		return n
	}
	return 1 << class(n)
}

// Put gives b back for reuse. The caller must not use b, or anything sliced from it,
// afterwards. Buffers smaller than MinSize or larger than the largest class are dropped.
func Put(b []byte) {
	n := cap(b)
	if n < MinSize || n > maxPooled {
		return
	}
	// A buffer goes to the largest class it fully covers, so Get(n) from its class always
	// gets at least n bytes.
	c := bits.Len(uint(n)) - 1
	b = b[:0]
	pools[c-minClass].Put(&b)
}

// class is the size class whose buffers hold n bytes: ceil(log2(n)), at least minClass.
func class(n int) int {
	if n <= MinSize {
		return minClass
	}
	return bits.Len(uint(n - 1))
}
