package kbatch

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"testing"
)

// BenchmarkCRC32C is the checksum every produced batch is verified with and every fetched
// batch is stamped with. With the Castagnoli table hash/crc32 uses the CPU's CRC32
// instruction (SSE4.2 on amd64, the CRC extension on arm64).
func BenchmarkCRC32C(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		data := bytes.Repeat([]byte("crc32c benchmark"), size/16)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				crc32.Checksum(data, crcTable)
			}
		})
	}
}

// BenchmarkSplit is the framing and CRC check of one Produce partition's records field, done
// before anything is decompressed or written.
func BenchmarkSplit(b *testing.B) {
	raw := benchBatch(b, CodecNone, nil)
	batches := make([]Batch, 0, 1)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if batches, err = Split(batches[:0], raw); err != nil {
			b.Fatal(err)
		}
	}
}
