package kbatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Budget is how many decompressed bytes may still be produced. One Budget is meant to be
// shared by every batch of one Produce request: a small frame must not inflate to gigabytes,
// however many partitions it carries. The zero Budget allows nothing to be decompressed.
type Budget struct {
	remaining int
}

// NewBudget returns a budget of n bytes.
func NewBudget(n int) *Budget { return &Budget{remaining: max(n, 0)} }

// Remaining is what is left of the budget.
func (b *Budget) Remaining() int { return b.remaining }

// decompress appends the decompressed form of src to dst. It never lets dst grow past
// len(dst)+limit (+1 byte to notice the overrun) and fails with ErrBudgetExceeded as soon
// as the output would pass limit.
func decompress(dst, src []byte, codec Codec, limit int) ([]byte, error) {
	switch codec {
	case CodecGzip:
		return gunzip(dst, src, limit)
	case CodecSnappy:
		return unsnappy(dst, src, limit)
	case CodecLZ4:
		return unlz4(dst, src, limit)
	case CodecZstd:
		return unzstd(dst, src, limit)
	}
	return dst, corrupt("unknown compression codec %d", codec)
}

// maxStalls is how many empty reads in a row readBounded tolerates, as bufio does.
const maxStalls = 100

// readBounded reads r to EOF into dst's spare capacity, growing dst geometrically but never
// beyond limit+1 bytes of output.
func readBounded(dst []byte, r io.Reader, limit, sizeHint int) ([]byte, error) {
	start := len(dst)
	if want := start + min(max(sizeHint, 4<<10), limit+1); cap(dst) < want {
		dst = growTo(dst, want)
	}
	for stalls := 0; ; {
		if len(dst) == cap(dst) {
			if len(dst)-start > limit {
				return dst, ErrBudgetExceeded
			}
			dst = growTo(dst, start+min(2*(cap(dst)-start), limit+1))
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > limit {
			return dst, ErrBudgetExceeded
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, corrupt("%v", err)
		}
		// A reader that keeps returning nothing on damaged input must not spin forever.
		if n == 0 {
			if stalls++; stalls == maxStalls {
				return dst, corrupt("decompressor makes no progress")
			}
		} else {
			stalls = 0
		}
	}
}

// growTo returns dst with capacity of at least n, keeping its contents.
func growTo(dst []byte, n int) []byte {
	if cap(dst) >= n {
		return dst
	}
	grown := make([]byte, len(dst), n)
	copy(grown, dst)
	return grown
}

type gzipReader struct {
	src bytes.Reader
	zr  gzip.Reader
}

var gzipPool = sync.Pool{New: func() any { return new(gzipReader) }}

func gunzip(dst, src []byte, limit int) ([]byte, error) {
	r := gzipPool.Get().(*gzipReader)
	defer func() {
		r.src.Reset(nil) // a pooled reader must not pin the request's bytes
		gzipPool.Put(r)
	}()
	r.src.Reset(src)
	if err := r.zr.Reset(&r.src); err != nil {
		return dst, corrupt("gzip: %v", err)
	}
	return readBounded(dst, &r.zr, limit, 4*len(src))
}

var zstdPool = sync.Pool{New: func() any {
	// Concurrency 1 decodes synchronously on the caller's goroutine, so an idle pooled
	// decoder owns no goroutines and needs no Close.
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		panic(err) // the options are constant and valid
	}
	return d
}}

// unzstd decodes in memory: DecodeAll writes straight into dst (no separate window buffer),
// refuses a frame that declares a content size over the limit before allocating, and stops
// within one block (128 KiB) of passing the limit otherwise.
func unzstd(dst, src []byte, limit int) ([]byte, error) {
	if limit <= 0 {
		return dst, ErrBudgetExceeded
	}
	d := zstdPool.Get().(*zstd.Decoder)
	defer zstdPool.Put(d)
	if err := d.ResetWithOptions(nil, zstd.WithDecoderMaxMemory(uint64(limit))); err != nil {
		return dst, corrupt("zstd: %v", err)
	}
	start := len(dst)
	out, err := d.DecodeAll(src, dst)
	switch {
	// A window larger than the limit is refused by the decoder as well: it could only be
	// filled by output the budget does not allow.
	case errors.Is(err, zstd.ErrDecoderSizeExceeded), errors.Is(err, zstd.ErrWindowSizeExceeded),
		err == nil && len(out)-start > limit:
		return dst, ErrBudgetExceeded
	case err != nil:
		return dst, corrupt("zstd: %v", err)
	}
	return out, nil
}

// xerialMagic starts the snappy framing the Java client writes (snappy-java's stream
// format): the magic, two 4-byte versions, then blocks of [big-endian length][raw snappy].
// librdkafka and others send raw snappy instead; both must be accepted.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderSize = 16

// unsnappy charges every block's declared decoded length against the limit before decoding
// it, because a snappy block states its size up front and is decoded in one piece.
func unsnappy(dst, src []byte, limit int) ([]byte, error) {
	if len(src) < xerialHeaderSize || !bytes.HasPrefix(src, xerialMagic) {
		return unsnappyBlock(dst, src, limit)
	}
	start := len(dst)
	for rest := src[xerialHeaderSize:]; len(rest) > 0; {
		if len(rest) < 4 {
			return dst, corrupt("snappy: truncated xerial block length")
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return dst, corrupt("snappy: xerial block of %d bytes truncated to %d", n, len(rest))
		}
		var err error
		if dst, err = unsnappyBlock(dst, rest[:n], limit-(len(dst)-start)); err != nil {
			return dst, err
		}
		rest = rest[n:]
	}
	return dst, nil
}

func unsnappyBlock(dst, block []byte, limit int) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return dst, corrupt("snappy: %v", err)
	}
	if n > limit {
		return dst, ErrBudgetExceeded
	}
	dst = growTo(dst, len(dst)+n)
	out, err := s2.Decode(dst[len(dst):len(dst)+n], block)
	if err != nil {
		return dst, corrupt("snappy: %v", err)
	}
	return dst[:len(dst)+len(out)], nil
}
