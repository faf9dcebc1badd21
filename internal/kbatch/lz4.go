package kbatch

import (
	"encoding/binary"

	"github.com/pierrec/lz4/v4"
)

// Kafka's lz4 codec is the LZ4 frame format. unlz4 walks the frames itself and decodes each
// block straight into the output with lz4.UncompressBlock: pierrec/lz4's Reader decodes into
// its own block buffer, copies out of it, and always verifies the frame's XXH32 content
// checksum, which together cost about as much as the decoding.
//
// The frame checksums (header, block and content) are not verified. Every byte of the
// frame is already covered by the batch's CRC32C, checked before decompression, so damage in
// transit or in the client's buffers is caught there; a content checksum would add a check
// of the producer's compressor only, which Kafka's own reader long left unverified (a TODO
// in KafkaLZ4BlockInputStream; recent versions check it). The structure is checked in full:
// magic, version and reserved bits, block sizes against the declared maximum and the input,
// the declared content size, the end mark.

const (
	lz4Magic          = 0x184D2204
	lz4SkippableMagic = 0x184D2A50 // the low four bits are free
	lz4SkippableMask  = 0xFFFFFFF0
	lz4Uncompressed   = 1 << 31 // block size flag: stored as is
	lz4DictWindow     = 64 << 10

	lz4FlagVersion      = 0xC0
	lz4FlagIndependent  = 0x20
	lz4FlagBlockSum     = 0x10
	lz4FlagContentSize  = 0x08
	lz4FlagContentSum   = 0x04
	lz4FlagReserved     = 0x02
	lz4FlagDictID       = 0x01
	lz4Version1         = 0x40
	lz4BlockMaxMask     = 0x70
	lz4DescriptorUnused = 0x8F // reserved bits of the BD byte
)

// unlz4 appends the decompressed content of src, one or more LZ4 frames (skippable frames
// are skipped), to dst, never letting the output pass limit bytes (ErrBudgetExceeded).
func unlz4(dst, src []byte, limit int) ([]byte, error) {
	d := lz4Decoder{start: len(dst), limit: limit}
	dst = growTo(dst, len(dst)+min(max(4*len(src), 4<<10), limit+1))
	for len(src) > 0 {
		if len(src) < 4 {
			return dst, corrupt("lz4: %d bytes after the last frame", len(src))
		}
		magic := binary.LittleEndian.Uint32(src)
		switch {
		case magic&lz4SkippableMask == lz4SkippableMagic:
			if len(src) < 8 || uint64(binary.LittleEndian.Uint32(src[4:])) > uint64(len(src)-8) {
				return dst, corrupt("lz4: truncated skippable frame")
			}
			src = src[8+binary.LittleEndian.Uint32(src[4:]):]
		case magic == lz4Magic:
			var err error
			if dst, src, err = d.frame(dst, src[4:]); err != nil {
				return dst, err
			}
		default:
			return dst, corrupt("lz4: bad frame magic %#x", magic)
		}
	}
	return dst, nil
}

// lz4Decoder tracks the output budget across the frames of one input.
type lz4Decoder struct {
	start int // where the output began in dst
	limit int
}

// frame decodes one frame after its magic and returns dst with its content and the input
// after the frame.
func (d *lz4Decoder) frame(dst, src []byte) ([]byte, []byte, error) {
	if len(src) < 3 {
		return dst, nil, corrupt("lz4: truncated frame descriptor")
	}
	flg, bd := src[0], src[1]
	switch {
	case flg&lz4FlagVersion != lz4Version1:
		return dst, nil, corrupt("lz4: frame version %d", flg>>6)
	case flg&lz4FlagReserved != 0 || bd&lz4DescriptorUnused != 0:
		return dst, nil, corrupt("lz4: reserved descriptor bits set")
	case flg&lz4FlagDictID != 0:
		return dst, nil, corrupt("lz4: frames that need a dictionary are not supported")
	}
	code := int(bd&lz4BlockMaxMask) >> 4
	if code < 4 {
		return dst, nil, corrupt("lz4: block maximum size code %d", code)
	}
	blockMax := 64 << 10 << (2 * (code - 4)) // 64 KiB, 256 KiB, 1 MiB, 4 MiB
	n := 2
	contentSize := int64(-1)
	if flg&lz4FlagContentSize != 0 {
		if len(src) < n+8+1 {
			return dst, nil, corrupt("lz4: truncated frame descriptor")
		}
		contentSize = int64(min(binary.LittleEndian.Uint64(src[n:]), 1<<62))
		n += 8
	}
	src = src[n+1:] // and the header checksum
	frameStart := len(dst)
	if contentSize >= 0 && contentSize <= int64(d.room(dst)) {
		dst = growTo(dst, len(dst)+int(contentSize))
	}
	for {
		if len(src) < 4 {
			return dst, nil, corrupt("lz4: truncated block size")
		}
		size := binary.LittleEndian.Uint32(src)
		src = src[4:]
		if size == 0 {
			break // end mark
		}
		stored := size&lz4Uncompressed != 0
		size &^= lz4Uncompressed
		if int64(size) > int64(blockMax) || int64(size) > int64(len(src)) {
			return dst, nil, corrupt("lz4: block of %d bytes (maximum %d, %d left)", size, blockMax, len(src))
		}
		block := src[:size]
		src = src[size:]
		if flg&lz4FlagBlockSum != 0 {
			if len(src) < 4 {
				return dst, nil, corrupt("lz4: truncated block checksum")
			}
			src = src[4:]
		}
		var err error
		if stored {
			dst, err = d.stored(dst, block)
		} else {
			var dict []byte
			if flg&lz4FlagIndependent == 0 {
				dict = dst[max(frameStart, len(dst)-lz4DictWindow):]
			}
			dst, err = d.block(dst, block, dict, blockMax)
		}
		if err != nil {
			return dst, nil, err
		}
	}
	if flg&lz4FlagContentSum != 0 {
		if len(src) < 4 {
			return dst, nil, corrupt("lz4: truncated content checksum")
		}
		src = src[4:]
	}
	if contentSize >= 0 && int64(len(dst)-frameStart) != contentSize {
		return dst, nil, corrupt("lz4: frame holds %d bytes, declares %d", len(dst)-frameStart, contentSize)
	}
	return dst, src, nil
}

// room is how many more bytes the budget allows.
func (d *lz4Decoder) room(dst []byte) int { return d.limit - (len(dst) - d.start) }

func (d *lz4Decoder) stored(dst, block []byte) ([]byte, error) {
	if len(block) > d.room(dst) {
		return dst, ErrBudgetExceeded
	}
	return append(d.reserve(dst, len(block)), block...), nil
}

// block decodes a compressed block into dst's spare capacity. The space offered is the
// block maximum, or the budget's remainder plus one byte when that is less: a block that
// does not fit then breaks the budget (or is corrupt, which is refused just the same).
func (d *lz4Decoder) block(dst, block, dict []byte, blockMax int) ([]byte, error) {
	window := min(blockMax, d.room(dst)+1)
	dst = d.reserve(dst, window)
	n, err := lz4.UncompressBlockWithDict(block, dst[len(dst):len(dst)+window], dict)
	switch {
	case err != nil && window < blockMax:
		return dst, ErrBudgetExceeded
	case err != nil:
		return dst, corrupt("lz4: %v", err)
	case n > d.room(dst):
		return dst, ErrBudgetExceeded
	}
	return dst[:len(dst)+n], nil
}

// reserve makes room for n more bytes in dst, growing it geometrically within the budget.
func (d *lz4Decoder) reserve(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	ceiling := d.start + d.limit + 1
	return growTo(dst, max(len(dst)+n, min(2*cap(dst), ceiling)))
}
