package kbatch

import (
	"encoding/binary"
	"math/bits"
)

// Kafka record fields use zig-zag varints: at most 5 bytes for 32-bit values and 10 for
// 64-bit ones, as the Java client reads them.
const (
	maxVarintLen  = 5
	maxVarlongLen = 10
)

// readVarint decodes a zig-zag varint from b. n is the number of bytes read, or 0 when b is
// truncated or the encoding is longer than 5 bytes or overflows 32 bits.
func readVarint(b []byte) (v int32, n int) {
	u, n := binary.Uvarint(b)
	if n <= 0 || n > maxVarintLen || u > 1<<32-1 {
		return 0, 0
	}
	return int32(uint32(u)>>1) ^ -int32(uint32(u)&1), n
}

// readVarlong decodes a zig-zag varlong from b; n is 0 when b is truncated or malformed.
func readVarlong(b []byte) (v int64, n int) {
	u, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0
	}
	return int64(u>>1) ^ -int64(u&1), n
}

func zigzag64(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func appendVarint(dst []byte, v int32) []byte { return binary.AppendUvarint(dst, zigzag64(int64(v))) }

func appendVarlong(dst []byte, v int64) []byte { return binary.AppendUvarint(dst, zigzag64(v)) }

// varlongLen is the encoded size of v as a zig-zag varint or varlong.
func varlongLen(v int64) int { return (bits.Len64(zigzag64(v)|1) + 6) / 7 }

// bytesLen is the encoded size of a length-prefixed byte field; nil encodes as length -1.
func bytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varlongLen(int64(len(b))) + len(b)
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return appendVarint(dst, -1)
	}
	dst = appendVarint(dst, int32(len(b)))
	return append(dst, b...)
}
