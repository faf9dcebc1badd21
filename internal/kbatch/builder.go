package kbatch

import (
	"fmt"
	"hash/crc32"
	"math"
)

// RecordHeader is one record header for the Builder. A nil Value is a null one; header keys
// cannot be null in Kafka, so a nil Key is written as an empty one.
type RecordHeader struct {
	Key   []byte
	Value []byte
}

// Builder appends one uncompressed v2 batch to a caller-owned buffer, as the Fetch path
// needs: CreateTime timestamps, producer id, epoch and base sequence -1, CRC32C computed on
// Finish. After the buffer has grown to its working size, appending a record allocates
// nothing. The zero Builder is ready for Begin.
type Builder struct {
	buf   []byte
	start int // where the batch begins in buf
	hdr   Header
	count int32
}

// Begin starts a batch at the end of dst. leaderEpoch is the partition leader epoch to
// stamp (-1 when unknown). The base offset and timestamp are taken from the first record.
func (b *Builder) Begin(dst []byte, leaderEpoch int32) {
	b.start = len(dst)
	b.buf = append(dst, make([]byte, HeaderSize)...)
	b.count = 0
	b.hdr = Header{
		PartitionLeaderEpoch: leaderEpoch,
		Magic:                Magic,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		BaseSequence:         -1,
	}
}

// SetLogAppendTime marks the batch begun as one of broker append times (the timestamp-type
// attribute): clients then take its max timestamp as the timestamp of every record in it.
func (b *Builder) SetLogAppendTime() { b.hdr.Attributes |= attrLogAppendTime }

// SetProducer stamps the batch begun with a producer id and epoch; with control it is a
// control batch (a transaction marker), with transactional a batch of a transaction. Kafka
// clients reading read_committed skip control batches and use the producer id of
// transactional ones (docs/TRANSACTIONS.md).
func (b *Builder) SetProducer(id int64, epoch int16, transactional, control bool) {
	b.hdr.ProducerID, b.hdr.ProducerEpoch = id, epoch
	if transactional {
		b.hdr.Attributes |= attrTransactional
	}
	if control {
		b.hdr.Attributes |= attrControl
	}
}

// Len is the number of records appended since Begin.
func (b *Builder) Len() int { return int(b.count) }

// Size is the size in bytes of the batch so far, header included.
func (b *Builder) Size() int { return len(b.buf) - b.start }

// RecordSize is how many bytes Append would add for a record; callers use it to stay within
// Fetch byte limits before appending.
func (b *Builder) RecordSize(offset, timestamp int64, key, value []byte, headers []RecordHeader) int {
	body := b.bodySize(offset, timestamp, key, value, headers)
	return varlongLen(int64(body)) + body
}

func (b *Builder) bodySize(offset, timestamp int64, key, value []byte, headers []RecordHeader) int {
	offsetDelta, timestampDelta := int64(0), int64(0)
	if b.count > 0 {
		offsetDelta, timestampDelta = offset-b.hdr.BaseOffset, timestamp-b.hdr.BaseTimestamp
	}
	size := 1 + varlongLen(timestampDelta) + varlongLen(offsetDelta) +
		bytesLen(key) + bytesLen(value) + varlongLen(int64(len(headers)))
	for i := range headers {
		size += varlongLen(int64(len(headers[i].Key))) + len(headers[i].Key) + bytesLen(headers[i].Value)
	}
	return size
}

// Append adds a record with an absolute offset and a timestamp in milliseconds. Offsets
// must increase (gaps are allowed) and stay within 2^31-1 of the first one.
func (b *Builder) Append(offset, timestamp int64, key, value []byte, headers []RecordHeader) error {
	if b.count == 0 {
		b.hdr.BaseOffset, b.hdr.BaseTimestamp, b.hdr.MaxTimestamp = offset, timestamp, timestamp
	}
	offsetDelta := offset - b.hdr.BaseOffset
	if b.count > 0 && (offsetDelta <= int64(b.hdr.LastOffsetDelta) || offsetDelta > math.MaxInt32) {
		return fmt.Errorf("kbatch: offset %d does not follow %d in one batch",
			offset, b.hdr.BaseOffset+int64(b.hdr.LastOffsetDelta))
	}
	if b.count == math.MaxInt32 {
		return fmt.Errorf("kbatch: batch is full")
	}
	body := b.bodySize(offset, timestamp, key, value, headers)
	b.buf = appendVarint(b.buf, int32(body))
	b.buf = append(b.buf, 0) // record attributes: unused
	b.buf = appendVarlong(b.buf, timestamp-b.hdr.BaseTimestamp)
	b.buf = appendVarint(b.buf, int32(offsetDelta))
	b.buf = appendBytes(b.buf, key)
	b.buf = appendBytes(b.buf, value)
	b.buf = appendVarint(b.buf, int32(len(headers)))
	for i := range headers {
		b.buf = appendVarint(b.buf, int32(len(headers[i].Key)))
		b.buf = append(b.buf, headers[i].Key...)
		b.buf = appendBytes(b.buf, headers[i].Value)
	}
	b.hdr.LastOffsetDelta = int32(offsetDelta)
	b.hdr.MaxTimestamp = max(b.hdr.MaxTimestamp, timestamp)
	b.count++
	return nil
}

// Finish writes the header and CRC and returns dst (as given to Begin) with the batch
// appended. A batch without records is dropped: dst comes back unchanged.
func (b *Builder) Finish() []byte {
	if b.count == 0 {
		return b.buf[:b.start]
	}
	batch := b.buf[b.start:]
	b.hdr.Length = int32(len(batch) - lengthFieldEnd)
	b.hdr.NumRecords = b.count
	putHeader(batch, &b.hdr)
	b.hdr.CRC = crc32.Checksum(batch[offAttributes:], crcTable)
	putHeader(batch, &b.hdr)
	return b.buf
}
