// Package producers allocates Kafka producer ids and keeps the idempotent-producer state of
// partitions (state.go, rebuild.go; docs/IDEMPOTENCE.md).
//
// # Producer id scheme
//
// A producer id is a positive int64 built so that ids are unique across gateways and across
// restarts without storing anything:
//
//	bit 63      0 (ids are positive)
//	bits 48–62  node id (NODE_ID, 0..32767): gateways never collide
//	bits 0–47   a hybrid clock: max(previous + 1, ticks since 2026-01-01 UTC),
//	            with 16 ticks per millisecond
//
// After a restart the clock has moved on, so new ids are above every id handed out before, as
// long as the gateway allocated fewer than 16 ids per millisecond on average (16 000 per
// second, far above what InitProducerId sees) and the wall clock did not step back. 48 bits of
// 1/16 ms last about 557 years.
package producers

import (
	"fmt"
	"sync"
	"time"
)

const (
	nodeBits      = 15
	clockBits     = 48
	ticksPerMilli = 16
	// MaxNodeID is the largest node id that fits the scheme.
	MaxNodeID = 1<<nodeBits - 1
	clockMask = 1<<clockBits - 1
)

// epoch is the zero of the clock part.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Allocator hands out producer ids. It is safe for concurrent use.
type Allocator struct {
	node int64
	now  func() time.Time

	mu   sync.Mutex
	last int64 // clock part of the latest id
}

// NewAllocator returns an allocator for node.
func NewAllocator(node int) (*Allocator, error) {
	if node < 0 || node > MaxNodeID {
		return nil, fmt.Errorf("producers: node id %d outside 0..%d", node, MaxNodeID)
	}
	return &Allocator{node: int64(node), now: time.Now}, nil
}

// Next returns a new producer id.
func (a *Allocator) Next() int64 {
	ticks := a.now().Sub(epoch).Milliseconds() * ticksPerMilli
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = max(a.last+1, ticks) & clockMask
	return a.node<<clockBits | a.last
}

// NodeOf returns the node id that allocated id.
func NodeOf(id int64) int { return int(id >> clockBits) }
