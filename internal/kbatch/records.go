package kbatch

import (
	"math"
	"sync"
)

// Records are the decoded records of one batch: decompressed, with their structure and count
// checked. Iterate them with Iter. A Records from a compressed batch holds a pooled buffer:
// call Release once nothing refers to its keys, values or headers any more.
type Records struct {
	// Header is the batch header the records belong to.
	Header Header
	data   []byte
	buf    *[]byte // pooled decompression buffer; nil when data aliases the request
	// earliest is the earliest positive record timestamp (ms), found while validating so
	// that the mapping's timestamp window needs no pass of its own over the records.
	earliest int64
}

// EarliestTimestamp is the earliest positive record timestamp in milliseconds, or
// math.MaxInt64 when no record has a positive one.
func (r *Records) EarliestTimestamp() int64 { return r.earliest }

// Largest decompression buffer worth keeping in the pool; bigger ones are left to the GC so
// one huge batch does not pin its memory forever.
const maxPooledBuffer = 8 << 20

var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// Decode decompresses the batch's records (charging the output to budget) and validates
// every record: varint and length fields against the bytes that remain, header structure,
// and that the record count matches the header. Uncompressed records are not copied and do
// not touch the budget; a nil budget allows no decompression. On error nothing needs
// releasing.
func (b *Batch) Decode(budget *Budget) (Records, error) {
	recs := Records{Header: b.Header}
	body := b.body()
	if b.Codec() == CodecNone {
		recs.data = body
	} else {
		if budget == nil {
			return Records{}, ErrBudgetExceeded
		}
		buf := bufPool.Get().(*[]byte)
		out, err := decompress((*buf)[:0], body, b.Codec(), budget.remaining)
		if err != nil {
			putBuffer(buf, out)
			return Records{}, err
		}
		budget.remaining -= len(out)
		recs.data, recs.buf = out, buf
	}
	n, earliest, err := validate(recs.data, b.BaseTimestamp)
	recs.earliest = earliest
	if err == nil && n != int(b.NumRecords) {
		err = invalid("batch declares %d records and holds %d", b.NumRecords, n)
	}
	if err != nil {
		recs.Release()
		return Records{}, err
	}
	return recs, nil
}

func putBuffer(buf *[]byte, b []byte) {
	if cap(b) > maxPooledBuffer {
		b = nil
	}
	*buf = b[:0]
	bufPool.Put(buf)
}

// Release returns the decompression buffer to the pool. Slices handed out by the iterator
// must not be used afterwards. Release is idempotent.
func (r *Records) Release() {
	if r.buf != nil {
		putBuffer(r.buf, r.data)
		r.buf = nil
	}
	r.data = nil
}

// Len is the number of records.
func (r *Records) Len() int { return int(r.Header.NumRecords) }

// Iter returns an iterator over the records, in order.
func (r *Records) Iter() RecordIter {
	return RecordIter{data: r.data, baseTimestamp: r.Header.BaseTimestamp}
}

// validate walks every record once and returns how many there are and the earliest positive
// timestamp among them (math.MaxInt64 when none is positive).
func validate(data []byte, baseTimestamp int64) (n int, earliest int64, err error) {
	earliest = math.MaxInt64
	for len(data) > 0 {
		var rec Record
		size, err := rec.parse(data, baseTimestamp)
		if err != nil {
			return n, earliest, err
		}
		if rec.Timestamp > 0 {
			earliest = min(earliest, rec.Timestamp)
		}
		for h := rec.Headers(); ; {
			_, _, ok, err := h.next()
			if err != nil {
				return n, earliest, err
			}
			if !ok {
				break
			}
		}
		data = data[size:]
		n++
	}
	return n, earliest, nil
}

// Record is one record. Key, Value and header slices alias the batch's buffer. A nil Key
// or Value is a null one; an empty non-nil slice is an empty one.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	// Timestamp is the batch's base timestamp plus TimestampDelta, in milliseconds.
	Timestamp   int64
	OffsetDelta int32
	Key         []byte
	Value       []byte
	// NumHeaders is the number of headers Headers yields.
	NumHeaders int
	headers    []byte
}

// Headers iterates the record's headers in wire order, duplicates included.
func (r *Record) Headers() HeaderIter { return HeaderIter{data: r.headers, left: r.NumHeaders} }

// parse reads one record (length-prefixed) from b and returns how many bytes it took. Header
// contents are checked by walking Headers.
func (r *Record) parse(b []byte, baseTimestamp int64) (int, error) {
	length, n := readVarint(b)
	if n == 0 {
		return 0, corrupt("bad record length varint")
	}
	if length <= 0 || int(length) > len(b)-n {
		return 0, corrupt("record length %d with %d bytes left", length, len(b)-n)
	}
	total := n + int(length)
	body := b[n:total:total]

	if len(body) < 1 {
		return 0, corrupt("record without attributes")
	}
	r.Attributes = int8(body[0])
	body = body[1:]
	if r.TimestampDelta, n = readVarlong(body); n == 0 {
		return 0, corrupt("bad record timestamp delta")
	}
	body = body[n:]
	r.Timestamp = baseTimestamp + r.TimestampDelta
	if r.OffsetDelta, n = readVarint(body); n == 0 {
		return 0, corrupt("bad record offset delta")
	}
	body = body[n:]
	var err error
	if r.Key, body, err = readNullableBytes(body, "key"); err != nil {
		return 0, err
	}
	if r.Value, body, err = readNullableBytes(body, "value"); err != nil {
		return 0, err
	}
	count, n := readVarint(body)
	if n == 0 || count < 0 {
		return 0, corrupt("bad record header count")
	}
	body = body[n:]
	// Each header takes at least two bytes; a count the record cannot hold is refused here so
	// callers may size things from NumHeaders.
	if int(count) > len(body)/2 {
		return 0, corrupt("record declares %d headers in %d bytes", count, len(body))
	}
	r.NumHeaders, r.headers = int(count), body
	return total, nil
}

// readNullableBytes reads a varint-length-prefixed field where -1 means null.
func readNullableBytes(b []byte, what string) (field, rest []byte, err error) {
	l, n := readVarint(b)
	switch {
	case n == 0:
		return nil, nil, corrupt("bad %s length varint", what)
	case l == -1:
		return nil, b[n:], nil
	case l < 0 || int(l) > len(b)-n:
		return nil, nil, corrupt("%s length %d with %d bytes left", what, l, len(b)-n)
	}
	end := n + int(l)
	return b[n:end:end], b[end:], nil
}

// RecordIter iterates the records of a Records. The zero value yields nothing.
type RecordIter struct {
	data          []byte
	baseTimestamp int64
}

// Next fills rec with the next record and reports whether there was one. Records were
// validated by Decode, so iteration only stops at the end.
func (it *RecordIter) Next(rec *Record) bool {
	if len(it.data) == 0 {
		return false
	}
	size, err := rec.parse(it.data, it.baseTimestamp)
	if err != nil {
		it.data = nil // unreachable after Decode's validation; stop rather than loop
		return false
	}
	it.data = it.data[size:]
	return true
}

// HeaderIter iterates one record's headers.
type HeaderIter struct {
	data []byte
	left int
}

// Next returns the next header. The name is never nil; a nil value is a null one.
func (h *HeaderIter) Next() (name, value []byte, ok bool) {
	name, value, ok, err := h.next()
	if err != nil {
		h.left = 0
		return nil, nil, false
	}
	return name, value, ok
}

func (h *HeaderIter) next() (name, value []byte, ok bool, err error) {
	if h.left == 0 {
		if len(h.data) != 0 {
			return nil, nil, false, corrupt("%d bytes after the last record header", len(h.data))
		}
		return nil, nil, false, nil
	}
	l, n := readVarint(h.data)
	if n == 0 || l < 0 || int(l) > len(h.data)-n {
		return nil, nil, false, corrupt("bad record header name length")
	}
	end := n + int(l)
	name = h.data[n:end:end]
	if value, h.data, err = readNullableBytes(h.data[end:], "header value"); err != nil {
		return nil, nil, false, err
	}
	h.left--
	return name, value, true, nil
}
