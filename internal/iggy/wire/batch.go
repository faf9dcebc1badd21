package wire

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/zeebo/xxh3"
)

// The canonical message batch of Iggy's SendMessages (protocol 0.11.0) is a 256-byte batch header followed by frames;
// each frame is a 48-byte frame header, the payload, then the user-headers block. Both the
// frames and the batch carry XXH3-64 checksums. This file holds the header layout (a
// protocol-version seam: 0.12.0 adds producer identity fields after message_count) and the
// encoder; batchread.go holds the decoder.

// Batch layout sizes and limits.
const (
	BatchHeaderSize = 256
	FrameHeaderSize = 48
	MaxPayloadSize  = 64_000_000
)

// Batch header offsets.
const (
	bhPartitionID     = 0
	bhBaseOffset      = 8
	bhBaseTimestamp   = 16
	bhOriginTimestamp = 24
	bhLength          = 32
	bhChecksum        = 40
	bhMessageCount    = 48
	bhReserved        = 52
)

// Frame header offsets.
const (
	fhChecksum       = 0
	fhID             = 8
	fhOffsetDelta    = 24
	fhTimestampDelta = 28
	fhHeadersLength  = 32
	fhPayloadLength  = 36
	fhReserved       = 40
)

// BatchHeader is the decoded batch header. PartitionID, BaseOffset and BaseTimestamp are
// stamped by the server; producers send zeros.
type BatchHeader struct {
	PartitionID     uint64
	BaseOffset      uint64
	BaseTimestamp   uint64 // server append time, µs
	OriginTimestamp uint64 // minimum producer timestamp, µs
	Length          uint64 // BatchHeaderSize + frames
	Checksum        uint64
	MessageCount    uint32
}

// PutBatchHeader writes h into dst[:BatchHeaderSize], zeroing the reserved bytes.
func PutBatchHeader(dst []byte, h *BatchHeader) {
	dst = dst[:BatchHeaderSize]
	le := binary.LittleEndian
	le.PutUint64(dst[bhPartitionID:], h.PartitionID)
	le.PutUint64(dst[bhBaseOffset:], h.BaseOffset)
	le.PutUint64(dst[bhBaseTimestamp:], h.BaseTimestamp)
	le.PutUint64(dst[bhOriginTimestamp:], h.OriginTimestamp)
	le.PutUint64(dst[bhLength:], h.Length)
	le.PutUint64(dst[bhChecksum:], h.Checksum)
	le.PutUint32(dst[bhMessageCount:], h.MessageCount)
	clear(dst[bhReserved:])
}

// DecodeBatchHeader decodes a batch header, rejecting non-zero reserved bytes and a length
// that does not cover the header.
func DecodeBatchHeader(b []byte) (BatchHeader, error) {
	if len(b) < BatchHeaderSize {
		return BatchHeader{}, truncated("batch header", BatchHeaderSize, len(b))
	}
	le := binary.LittleEndian
	h := BatchHeader{
		PartitionID:     le.Uint64(b[bhPartitionID:]),
		BaseOffset:      le.Uint64(b[bhBaseOffset:]),
		BaseTimestamp:   le.Uint64(b[bhBaseTimestamp:]),
		OriginTimestamp: le.Uint64(b[bhOriginTimestamp:]),
		Length:          le.Uint64(b[bhLength:]),
		Checksum:        le.Uint64(b[bhChecksum:]),
		MessageCount:    le.Uint32(b[bhMessageCount:]),
	}
	for _, c := range b[bhReserved:BatchHeaderSize] {
		if c != 0 {
			return BatchHeader{}, formatErr(codeInvalidFormat, "batch header reserved bytes must be zero")
		}
	}
	if h.Length < BatchHeaderSize {
		return BatchHeader{}, formatErr(codeInvalidFormat, "batch length %d does not cover the batch header", h.Length)
	}
	return h, nil
}

// batchChecksum hashes the header fields (as they are in h) followed by the checksum field of
// every frame in blob. The frames must already be known to tile blob. The hashed bytes are
// gathered into one contiguous buffer for a single xxh3.Hash: the streaming hasher, fed eight
// bytes at a time, costs several times as much.
func batchChecksum(h *BatchHeader, blob []byte) uint64 {
	scratch := checksumScratch.Get().(*[]byte)
	in := appendChecksumInput((*scratch)[:0], h, blob)
	sum := xxh3.Hash(in)
	if cap(in) <= maxChecksumScratch {
		*scratch = in
		checksumScratch.Put(scratch)
	}
	return sum
}

// appendChecksumInput appends what the batch checksum covers: the header fields, then every
// frame's checksum field.
func appendChecksumInput(dst []byte, h *BatchHeader, blob []byte) []byte {
	dst = append(dst, make([]byte, checksumFieldsSize)...)
	putChecksumFields(dst[len(dst)-checksumFieldsSize:], h)
	for off := 0; off+FrameHeaderSize <= len(blob); off += frameSize(blob[off:]) {
		dst = append(dst, blob[off:off+8]...)
	}
	return dst
}

// checksumFieldsSize is the size of the header fields the batch checksum starts with.
const checksumFieldsSize = 44

// putChecksumFields writes the header fields the batch checksum covers into
// dst[:checksumFieldsSize].
func putChecksumFields(dst []byte, h *BatchHeader) {
	le := binary.LittleEndian
	le.PutUint64(dst[0:], h.PartitionID)
	le.PutUint64(dst[8:], h.BaseOffset)
	le.PutUint64(dst[16:], h.BaseTimestamp)
	le.PutUint64(dst[24:], h.OriginTimestamp)
	le.PutUint64(dst[32:], h.Length)
	le.PutUint32(dst[40:], h.MessageCount)
}

// checksumScratch holds gathering buffers for batchChecksum; one of 64 KiB covers a batch of
// about 8000 messages, bigger ones are not kept.
var checksumScratch = sync.Pool{New: func() any { return new([]byte) }}

const maxChecksumScratch = 64 << 10

// frameSize is the size of the well-formed frame at the start of b.
func frameSize(b []byte) int {
	return FrameHeaderSize + int(binary.LittleEndian.Uint32(b[fhHeadersLength:])) +
		int(binary.LittleEndian.Uint32(b[fhPayloadLength:]))
}

// sealFrame computes and stores the checksum of the frame that is exactly f.
func sealFrame(f []byte) {
	binary.LittleEndian.PutUint64(f[fhChecksum:], xxh3.Hash(f[fhID:]))
}

// Batch encodes messages into one canonical batch, appending every frame into a single
// buffer: a Batch that is Reset and reused encodes without allocating. It is not safe for
// concurrent use.
type Batch struct {
	buf     []byte   // batch header + frames
	origins []uint64 // producer timestamp of each frame
	// sums is the batch checksum's input, gathered as frames are sealed: room for the header
	// fields, then each frame's checksum field (empty until the first frame is sealed).
	sums   []byte
	min    uint64
	max    uint64
	idSeed [16]byte
	dirty  bool // some frame was hashed against a base that is no longer the minimum
}

// NewBatch returns an empty batch with room for about sizeHint bytes of payload and headers.
func NewBatch(sizeHint int) *Batch {
	b := &Batch{buf: make([]byte, BatchHeaderSize, BatchHeaderSize+max(sizeHint, 0))}
	b.Reset()
	return b
}

// Reset empties the batch, keeping its buffers.
func (b *Batch) Reset() {
	if cap(b.buf) < BatchHeaderSize {
		b.buf = make([]byte, BatchHeaderSize)
	}
	b.buf = b.buf[:BatchHeaderSize]
	b.origins = b.origins[:0]
	b.sums = b.sums[:0]
	b.min, b.max, b.dirty = 0, 0, false
	_, _ = rand.Read(b.idSeed[:])
}

// Grow makes room for n more messages totalling bytes of payload and headers.
func (b *Batch) Grow(n, bytes int) {
	if need := len(b.buf) + n*FrameHeaderSize + bytes; need > cap(b.buf) {
		buf := make([]byte, len(b.buf), need)
		copy(buf, b.buf)
		b.buf = buf
	}
	if need := len(b.origins) + n; need > cap(b.origins) {
		o := make([]uint64, len(b.origins), need)
		copy(o, b.origins)
		b.origins = o
	}
	b.sums = slices.Grow(b.sums, checksumFieldsSize+8*n)
}

// Len returns the number of messages in the batch.
func (b *Batch) Len() int { return len(b.origins) }

// Size returns the encoded size of the batch in bytes.
func (b *Batch) Size() int { return len(b.buf) }

// Add appends a message with a random id. originTimestamp is the producer time in µs (0 =
// now); headers is an encoded user-headers block (may be empty).
func (b *Batch) Add(originTimestamp uint64, payload, headers []byte) error {
	return b.AddWithID([16]byte{}, originTimestamp, payload, headers)
}

// AddWithID appends a message with id (zero = random). It rejects an empty or oversized
// payload, an invalid headers block, and a timestamp more than 2^32-1 µs (71.6 minutes) away
// from the others, which the frame's 32-bit delta cannot express.
func (b *Batch) AddWithID(id [16]byte, originTimestamp uint64, payload, headers []byte) error {
	if len(payload) == 0 {
		return formatErr(codeInvalidPayloadLength, "empty message payload")
	}
	if len(payload) > MaxPayloadSize {
		return formatErr(codeInvalidPayloadLength, "payload of %d bytes exceeds %d", len(payload), MaxPayloadSize)
	}
	if err := ValidateHeaders(headers); err != nil {
		return err
	}
	ts := originTimestamp
	if ts == 0 {
		ts = uint64(time.Now().UnixMicro())
	}
	n := len(b.origins)
	lo, hi := ts, ts
	if n > 0 {
		lo, hi = min(b.min, ts), max(b.max, ts)
		if hi-lo > math.MaxUint32 {
			return formatErr(codeInvalidTimestampDelta, "message timestamps %d and %d are too far apart for one batch", lo, hi)
		}
	}
	if id == ([16]byte{}) {
		id = b.idSeed
		binary.LittleEndian.PutUint64(id[:8], binary.LittleEndian.Uint64(id[:8])+uint64(n))
	}

	start := len(b.buf)
	size := FrameHeaderSize + len(payload) + len(headers)
	if cap(b.buf)-start < size {
		b.buf = append(b.buf[:cap(b.buf)], make([]byte, size)...)[:start]
	}
	b.buf = b.buf[:start+size]
	f := b.buf[start:]
	clear(f[:FrameHeaderSize])
	le := binary.LittleEndian
	copy(f[fhID:], id[:])
	le.PutUint32(f[fhOffsetDelta:], uint32(n))
	le.PutUint32(f[fhHeadersLength:], uint32(len(headers)))
	le.PutUint32(f[fhPayloadLength:], uint32(len(payload)))
	copy(f[FrameHeaderSize:], payload)
	copy(f[FrameHeaderSize+len(payload):], headers)

	if lo < b.min {
		b.dirty = true // earlier frames were hashed against the old minimum
	}
	b.min, b.max = lo, hi
	b.origins = append(b.origins, ts)
	if !b.dirty {
		le.PutUint32(f[fhTimestampDelta:], uint32(ts-b.min))
		sealFrame(f)
		b.addSum(f)
	}
	return nil
}

// addSum appends the checksum field of the sealed frame f to the batch checksum's input,
// after room for the header fields.
func (b *Batch) addSum(f []byte) {
	if len(b.sums) == 0 {
		b.sums = append(b.sums, make([]byte, checksumFieldsSize)...)
	}
	b.sums = append(b.sums, f[fhChecksum:fhChecksum+8]...)
}

// Bytes finishes the batch header and returns the encoded batch. It stays valid until the
// next Add or Reset. Calling it again after more Adds re-finishes the header.
func (b *Batch) Bytes() []byte {
	blob := b.buf[BatchHeaderSize:]
	if b.dirty {
		// Messages arrived out of timestamp order: re-base every frame on the minimum.
		b.sums = b.sums[:0]
		off := 0
		for _, ts := range b.origins {
			f := blob[off : off+frameSize(blob[off:])]
			binary.LittleEndian.PutUint32(f[fhTimestampDelta:], uint32(ts-b.min))
			sealFrame(f)
			b.addSum(f)
			off += len(f)
		}
		b.dirty = false
	}
	h := BatchHeader{
		OriginTimestamp: b.min,
		Length:          uint64(len(b.buf)),
		MessageCount:    uint32(len(b.origins)),
	}
	if len(b.sums) == 0 { // no frames
		b.sums = append(b.sums, make([]byte, checksumFieldsSize)...)
	}
	putChecksumFields(b.sums, &h)
	h.Checksum = xxh3.Hash(b.sums)
	PutBatchHeader(b.buf, &h)
	return b.buf
}
