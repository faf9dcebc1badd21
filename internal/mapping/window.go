package mapping

import (
	"math"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// maxSpanMicros is the widest origin-timestamp spread one Iggy send can carry: frames store
// their timestamp as a u32 delta from the batch's minimum (about 71.6 minutes).
const maxSpanMicros = math.MaxUint32

// noTimestamp is what Kafka sends for a record without a timestamp.
const noTimestamp = -1

// Window is the range of origin timestamps (µs) one Iggy send may use. Records outside it
// are stored with their origin clamped into it and their real timestamp in kafka.ts, so any
// Kafka batch fits one send. The zero Window clamps nothing.
type Window struct {
	start   uint64
	bounded bool
}

// NewWindow returns the window starting at minMillis, the batch's earliest positive
// timestamp in milliseconds. A non-positive minMillis gives the zero Window.
func NewWindow(minMillis int64) Window {
	if us, ok := exactMicros(minMillis); ok && minMillis > 0 {
		return Window{start: us, bounded: true}
	}
	return Window{}
}

// WindowOf returns the window for one decoded batch: it starts at the earliest positive
// record timestamp, which kbatch found while validating the records. A timestamp too large
// for µs leaves the window unbounded: NewWindow refuses it, and every other positive
// timestamp is at least as large.
func WindowOf(recs *kbatch.Records) Window {
	return NewWindow(recs.EarliestTimestamp())
}

// Join returns the window for one Iggy send that carries the records of both windows'
// batches: the one that starts earlier. Records of the later batch that fall past its end are
// clamped like any other.
func (w Window) Join(o Window) Window {
	switch {
	case !w.bounded:
		return o
	case !o.bounded || w.start <= o.start:
		return w
	}
	return o
}

// exactMicros converts a Kafka timestamp to µs when the result reads back as the same
// timestamp: positive and without overflow. 0 ms is excluded because an origin of 0 reads
// back as "no timestamp".
func exactMicros(millis int64) (uint64, bool) {
	if millis <= 0 || uint64(millis) > math.MaxUint64/1000 {
		return 0, false
	}
	return uint64(millis) * 1000, true
}

// stamp decides where a record timestamp is stored: the origin timestamp, plus kafka.ts
// (ms) when the origin does not read back as the record's timestamp.
func (w Window) stamp(millis int64) (origin uint64, header bool) {
	native, exact := exactMicros(millis)
	origin = native
	if w.bounded {
		origin = min(max(native, w.start), w.start+maxSpanMicros)
	}
	if millis == noTimestamp {
		// No timestamp reads back as the server's append time: fine as origin 0, but a
		// clamped origin would read back as a real timestamp.
		return origin, origin != 0
	}
	return origin, !exact || origin != native
}
