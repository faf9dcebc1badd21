package producers

import (
	"sync/atomic"
	"unsafe"
)

// EntryBytes estimates the memory one remembered producer takes: its state (with its Retained
// batches inline) and its map slot. A producer's memory does not grow with its writes.
const EntryBytes = int64(unsafe.Sizeof(producer{})) + mapSlotBytes

// mapSlotBytes is a map entry of an int64 key and a pointer, with Go's map overhead.
const mapSlotBytes = 32

// Usage counts the producers remembered by the partitions that share it, for /metrics. It is
// safe for concurrent use.
type Usage struct{ producers atomic.Int64 }

func (u *Usage) add(n int64) { u.producers.Add(n) }

// Producers is the number of producers remembered.
func (u *Usage) Producers() int64 { return u.producers.Load() }

// Bytes estimates the memory they take.
func (u *Usage) Bytes() int64 { return u.Producers() * EntryBytes }
