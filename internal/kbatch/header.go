package kbatch

import (
	"encoding/binary"
	"hash/crc32"
)

// Sizes and offsets of the v2 batch header. The CRC covers everything from the attributes to
// the end of the batch.
const (
	// HeaderSize is the size of the v2 batch header, up to and including the record count.
	HeaderSize = 61
	// Magic is the only record batch format this package handles.
	Magic = 2

	// lengthFieldEnd is where the batch length field ends: the length counts the bytes after it.
	lengthFieldEnd = 12
	offMagic       = 16
	offCRC         = 17
	offAttributes  = 21
)

// Attribute bits of a v2 batch.
const (
	attrCodecMask     = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

// crcTable is the Castagnoli table; crc32 uses the CPU's CRC32C instruction for it.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Codec is a batch compression codec, as stored in the low three attribute bits.
type Codec int8

// Codecs Kafka defines.
const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return "unknown"
}

// Header is the fixed part of a v2 record batch.
type Header struct {
	BaseOffset           int64
	Length               int32 // bytes after the length field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64 // Kafka's "first timestamp"; record timestamps are deltas from it
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Codec is the batch's compression codec.
func (h *Header) Codec() Codec { return Codec(h.Attributes & attrCodecMask) }

// LogAppendTime reports whether the batch's timestamps are broker append times rather than
// producer create times.
func (h *Header) LogAppendTime() bool { return h.Attributes&attrLogAppendTime != 0 }

// Transactional reports whether the batch is part of a transaction.
func (h *Header) Transactional() bool { return h.Attributes&attrTransactional != 0 }

// Control reports whether the batch holds control records (transaction markers).
func (h *Header) Control() bool { return h.Attributes&attrControl != 0 }

// parseHeader reads a header from b, which holds at least HeaderSize bytes.
func parseHeader(b []byte) Header {
	be := binary.BigEndian
	return Header{
		BaseOffset:           int64(be.Uint64(b[0:])),
		Length:               int32(be.Uint32(b[8:])),
		PartitionLeaderEpoch: int32(be.Uint32(b[12:])),
		Magic:                int8(b[16]),
		CRC:                  be.Uint32(b[17:]),
		Attributes:           int16(be.Uint16(b[21:])),
		LastOffsetDelta:      int32(be.Uint32(b[23:])),
		BaseTimestamp:        int64(be.Uint64(b[27:])),
		MaxTimestamp:         int64(be.Uint64(b[35:])),
		ProducerID:           int64(be.Uint64(b[43:])),
		ProducerEpoch:        int16(be.Uint16(b[51:])),
		BaseSequence:         int32(be.Uint32(b[53:])),
		NumRecords:           int32(be.Uint32(b[57:])),
	}
}

// putHeader writes h into b[:HeaderSize]. The CRC is written as given.
func putHeader(b []byte, h *Header) {
	be := binary.BigEndian
	be.PutUint64(b[0:], uint64(h.BaseOffset))
	be.PutUint32(b[8:], uint32(h.Length))
	be.PutUint32(b[12:], uint32(h.PartitionLeaderEpoch))
	b[16] = byte(h.Magic)
	be.PutUint32(b[17:], h.CRC)
	be.PutUint16(b[21:], uint16(h.Attributes))
	be.PutUint32(b[23:], uint32(h.LastOffsetDelta))
	be.PutUint64(b[27:], uint64(h.BaseTimestamp))
	be.PutUint64(b[35:], uint64(h.MaxTimestamp))
	be.PutUint64(b[43:], uint64(h.ProducerID))
	be.PutUint16(b[51:], uint16(h.ProducerEpoch))
	be.PutUint32(b[53:], uint32(h.BaseSequence))
	be.PutUint32(b[57:], uint32(h.NumRecords))
}
