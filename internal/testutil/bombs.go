package testutil

import "encoding/binary"

// Decompression bombs shared by the codec, Produce-handler and end-to-end tests: small inputs
// that inflate, or declare that they inflate, far past any budget.

// ZstdRLEBomb is a hand-built zstd frame of blocks RLE blocks, each 128 KiB of zeros from four
// bytes of input: 8192 blocks (32 KiB) inflate to 1 GiB.
func ZstdRLEBomb(blocks int) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38} // magic, no content size, 128 KiB window
	return appendRLEBlocks(b, blocks)
}

// ZstdDeclaredBomb is about 1 KiB of zstd whose frame header declares 1 GiB of content.
func ZstdDeclaredBomb() []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xc0, 0x38} // magic, 8-byte content size, 128 KiB window
	b = binary.LittleEndian.AppendUint64(b, 1<<30)
	return appendRLEBlocks(b, 250)
}

// appendRLEBlocks appends n zstd RLE block headers of 128 KiB each, the last one marked last.
func appendRLEBlocks(b []byte, n int) []byte {
	for i := range n {
		h := uint32(128<<10)<<3 | 1<<1 // RLE block of 128 KiB
		if i == n-1 {
			h |= 1 // last block
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 0)
	}
	return b
}
