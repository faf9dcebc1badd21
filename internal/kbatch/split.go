package kbatch

import (
	"encoding/binary"
	"hash/crc32"
)

// Batch is one framed and CRC-checked v2 batch. Its records are still in wire form (possibly
// compressed); Decode turns them into an iterable Records.
type Batch struct {
	Header
	// Raw is the whole batch as received, header included. It aliases the input of Split.
	Raw []byte
}

// body is the records section: everything after the header.
func (b *Batch) body() []byte { return b.Raw[HeaderSize:] }

// Split validates the framing of the record batches in data, the records field of one
// Produce partition, and appends them to dst. It checks every batch's length, magic and
// CRC32C and refuses a partial batch or trailing bytes, so a caller can reject a partition
// before anything is written. It does not copy or decompress.
func Split(dst []Batch, data []byte) ([]Batch, error) {
	for len(data) > 0 {
		if len(data) < lengthFieldEnd {
			return dst, invalid("%d trailing bytes after the last batch", len(data))
		}
		length := int32(binary.BigEndian.Uint32(data[8:]))
		if length < HeaderSize-lengthFieldEnd {
			return dst, corrupt("batch length %d is shorter than a batch header", length)
		}
		size := lengthFieldEnd + int(length)
		if size > len(data) {
			return dst, invalid("batch of %d bytes truncated to %d", size, len(data))
		}
		raw := data[:size:size]
		data = data[size:]
		if raw[offMagic] != Magic {
			return dst, invalid("magic %d, only 2 is supported", int8(raw[offMagic]))
		}
		h := parseHeader(raw)
		if crc := crc32.Checksum(raw[offAttributes:], crcTable); crc != h.CRC {
			return dst, corrupt("CRC32C %08x, batch says %08x", crc, h.CRC)
		}
		if h.NumRecords < 0 {
			return dst, corrupt("negative record count %d", h.NumRecords)
		}
		if c := h.Codec(); c > CodecZstd {
			return dst, corrupt("unknown compression codec %d", c)
		}
		dst = append(dst, Batch{Header: h, Raw: raw})
	}
	return dst, nil
}

// CheckFromClient applies the rules Kafka's broker applies to a batch a client produces
// (LogValidator.validateBatch, origin CLIENT), all answered INVALID_RECORD: the offset range
// the header declares must be non-empty and match the record count, clients may not write
// control batches, and a batch with a producer id must carry a sequence. Kafka rewrites, and
// so accepts, records whose offset deltas are not 0, 1, 2…, and a client-set timestamp type.
// Batches the gateway builds itself (Fetch) may have offset gaps, so Split does not apply them.
func (h *Header) CheckFromClient() error {
	switch {
	case h.LastOffsetDelta < 0:
		return invalid("batch has an invalid offset range: last offset delta %d", h.LastOffsetDelta)
	case h.NumRecords <= 0:
		return invalid("invalid reported count for record batch: %d", h.NumRecords)
	case int64(h.LastOffsetDelta)+1 != int64(h.NumRecords):
		return invalid("inconsistent batch offset range: last offset delta %d and count of records %d", h.LastOffsetDelta, h.NumRecords)
	case h.Control():
		return invalid("clients are not allowed to write control records")
	case h.ProducerID >= 0 && h.BaseSequence < 0:
		return invalid("invalid sequence number %d in record batch with producer id %d", h.BaseSequence, h.ProducerID)
	}
	return nil
}
