package wire

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"
)

// Frame is one decoded message frame. Payload and Headers alias the batch bytes.
type Frame struct {
	Checksum       uint64
	ID             [16]byte
	OffsetDelta    uint32
	TimestampDelta uint32
	Payload        []byte
	Headers        []byte
}

// nextFrame decodes the frame at the start of blob and returns it with its size.
func nextFrame(blob []byte) (Frame, int, error) {
	if len(blob) < FrameHeaderSize {
		return Frame{}, 0, truncated("frame header", FrameHeaderSize, len(blob))
	}
	le := binary.LittleEndian
	if le.Uint64(blob[fhReserved:]) != 0 {
		return Frame{}, 0, formatErr(codeInvalidFormat, "frame reserved bytes must be zero")
	}
	hl := uint64(le.Uint32(blob[fhHeadersLength:]))
	pl := uint64(le.Uint32(blob[fhPayloadLength:]))
	if hl+pl > uint64(len(blob)-FrameHeaderSize) {
		return Frame{}, 0, truncated("frame body", int(min(hl+pl, 1<<31)), len(blob)-FrameHeaderSize)
	}
	end := FrameHeaderSize + int(pl) + int(hl)
	f := Frame{
		Checksum:       le.Uint64(blob[fhChecksum:]),
		OffsetDelta:    le.Uint32(blob[fhOffsetDelta:]),
		TimestampDelta: le.Uint32(blob[fhTimestampDelta:]),
		Payload:        blob[FrameHeaderSize : FrameHeaderSize+int(pl) : FrameHeaderSize+int(pl)],
		Headers:        blob[FrameHeaderSize+int(pl) : end : end],
	}
	copy(f.ID[:], blob[fhID:])
	return f, end, nil
}

// SplitBatch takes one batch record from the start of b, checking that b holds all of it,
// and returns its header, the whole record and what follows it. Frames are not checked.
func SplitBatch(b []byte) (h BatchHeader, batch, rest []byte, err error) {
	h, err = DecodeBatchHeader(b)
	if err != nil {
		return h, nil, nil, err
	}
	if h.Length > uint64(len(b)) {
		return h, nil, nil, truncated("batch", int(min(h.Length, 1<<31)), len(b))
	}
	return h, b[:h.Length:h.Length], b[h.Length:], nil
}

// WalkFrames calls fn for each frame of the batch record batch (as returned by SplitBatch),
// checking that exactly MessageCount frames tile the record. With verify set, it also checks
// every frame checksum (XXH3 over the frame after its checksum field). fn may be nil.
func WalkFrames(h *BatchHeader, batch []byte, verify bool, fn func(Frame) error) error {
	blob := batch[BatchHeaderSize:]
	var n uint32
	for len(blob) > 0 {
		if n == h.MessageCount {
			return formatErr(codeInvalidFormat, "batch holds more frames than its message count %d", h.MessageCount)
		}
		f, size, err := nextFrame(blob)
		if err != nil {
			return err
		}
		if verify {
			if sum := xxh3.Hash(blob[fhID:size]); sum != f.Checksum {
				return formatErr(codeInvalidMessageChecksum, "frame %d checksum %#x, computed %#x", n, f.Checksum, sum)
			}
		}
		if fn != nil {
			if err := fn(f); err != nil {
				return err
			}
		}
		blob = blob[size:]
		n++
	}
	if n != h.MessageCount {
		return formatErr(codeInvalidFormat, "batch holds %d frames, message count says %d", n, h.MessageCount)
	}
	return nil
}

// VerifyBatch fully checks a producer batch, as a server does before appending it: the
// record is exactly batch, frames tile it, payloads are non-empty, user headers are valid,
// frame checksums and the batch checksum match.
func VerifyBatch(batch []byte) (BatchHeader, error) {
	h, rec, rest, err := SplitBatch(batch)
	if err != nil {
		return h, err
	}
	if len(rest) != 0 {
		return h, formatErr(codeInvalidFormat, "%d bytes after the batch", len(rest))
	}
	if h.MessageCount == 0 {
		return h, formatErr(codeInvalidFormat, "empty batch")
	}
	err = WalkFrames(&h, rec, true, func(f Frame) error {
		if len(f.Payload) == 0 {
			return formatErr(codeEmptyMessagePayload, "empty message payload")
		}
		return ValidateHeaders(f.Headers)
	})
	if err != nil {
		return h, err
	}
	if sum := batchChecksum(&h, rec[BatchHeaderSize:]); sum != h.Checksum {
		return h, formatErr(codeInvalidBatchChecksum, "batch checksum %#x, computed %#x", h.Checksum, sum)
	}
	return h, nil
}

// StampBatch writes the server-assigned fields into a verified batch and recomputes its
// batch checksum, as the server does when it appends the batch.
func StampBatch(batch []byte, partitionID, baseOffset, baseTimestamp uint64) {
	h, err := DecodeBatchHeader(batch)
	if err != nil {
		return
	}
	h.PartitionID, h.BaseOffset, h.BaseTimestamp = partitionID, baseOffset, baseTimestamp
	h.Checksum = batchChecksum(&h, batch[BatchHeaderSize:h.Length])
	PutBatchHeader(batch, &h)
}

// AppendBatchSlice appends a batch record holding frames [first, first+n) of the stored batch
// record batch, as the server does to answer a poll that starts or ends inside a batch. Frame
// offset and timestamp deltas are kept, so offsets still derive from the original
// BaseOffset; the length, count and batch checksum are recomputed.
func AppendBatchSlice(dst, batch []byte, first, n int) ([]byte, error) {
	h, rec, _, err := SplitBatch(batch)
	if err != nil {
		return dst, err
	}
	if first < 0 || n <= 0 || uint64(first)+uint64(n) > uint64(h.MessageCount) {
		return dst, formatErr(codeInvalidFormat, "frames [%d, %d+%d) outside a batch of %d", first, first, n, h.MessageCount)
	}
	blob := rec[BatchHeaderSize:]
	start, end := 0, 0
	for i := 0; i < first+n; i++ {
		_, size, err := nextFrame(blob[end:])
		if err != nil {
			return dst, err
		}
		if i == first {
			start = end
		}
		end += size
	}
	frames := blob[start:end]
	h.Length = uint64(BatchHeaderSize + len(frames))
	h.MessageCount = uint32(n)
	h.Checksum = batchChecksum(&h, frames)
	at := len(dst)
	dst = append(dst, make([]byte, BatchHeaderSize)...)
	PutBatchHeader(dst[at:], &h)
	return append(dst, frames...), nil
}
