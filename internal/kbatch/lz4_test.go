package kbatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/pierrec/lz4/v4"
)

func lz4Frame(t testing.TB, b []byte, opts ...lz4.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// textLike is n bytes of words from a small vocabulary: lz4 compresses it, but not to nothing.
func textLike(n int) []byte {
	words := []string{"gateway ", "kafka ", "iggy ", "record ", "batch ", "offset ", "partition ", "topic "}
	var b []byte
	for seed := uint64(7); len(b) < n; {
		seed = seed*6364136223846793005 + 1442695040888963407
		b = append(b, words[seed>>61]...)
	}
	return b[:n]
}

// noise is n pseudo-random bytes, which lz4 cannot compress: it stores such blocks as is.
func noise(n int) []byte {
	b := make([]byte, n)
	for i, seed := 0, uint64(3); i < n; i++ {
		seed = seed*6364136223846793005 + 1442695040888963407
		b[i] = byte(seed >> 56)
	}
	return b
}

// lz4Linked is a hand-built frame of two blocks, the second of which copies the first (a
// match reaching back into the previous block), with the block-independence flag as given.
func lz4Linked(independent bool) []byte {
	flg := byte(lz4Version1)
	if independent {
		flg |= lz4FlagIndependent
	}
	f := binary.LittleEndian.AppendUint32(nil, lz4Magic)
	f = append(f, flg, 0x40, 0) // 64 KiB blocks; the header checksum is not verified
	f = binary.LittleEndian.AppendUint32(f, 8|lz4Uncompressed)
	f = append(f, "abcdefgh"...)
	// 0 literals, a match of 8 at offset 8; then the last sequence: 5 literals.
	block := []byte{0x04, 8, 0, 0x50, '1', '2', '3', '4', '5'}
	f = binary.LittleEndian.AppendUint32(f, uint32(len(block)))
	f = append(f, block...)
	return binary.LittleEndian.AppendUint32(f, 0)
}

func TestUnlz4(t *testing.T) {
	text := textLike(3<<20 + 12345)
	twoFrames := append(lz4Frame(t, text[:100_000]), lz4Frame(t, text[100_000:200_000])...)
	skippable := append([]byte{0x5f, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9}, lz4Frame(t, text[:5000])...)
	badContentSum := lz4Frame(t, text[:5000], lz4.ChecksumOption(true))
	badContentSum[len(badContentSum)-1] ^= 0xff
	sized := lz4Frame(t, text[:70_000], lz4.SizeOption(70_000))
	wrongSize := bytes.Clone(sized)
	binary.LittleEndian.PutUint64(wrongSize[6:], 69_999)
	tests := []struct {
		name string
		in   []byte
		want []byte
		err  error
	}{
		{"4 MiB blocks", lz4Frame(t, text), text, nil},
		{"64 KiB blocks", lz4Frame(t, text, lz4.BlockSizeOption(lz4.Block64Kb)), text, nil},
		{"256 KiB blocks with block checksums", lz4Frame(t, text, lz4.BlockSizeOption(lz4.Block256Kb), lz4.BlockChecksumOption(true)), text, nil},
		{"1 MiB blocks without content checksum", lz4Frame(t, text, lz4.BlockSizeOption(lz4.Block1Mb), lz4.ChecksumOption(false)), text, nil},
		{"incompressible blocks stored as is", lz4Frame(t, noise(200_000), lz4.BlockSizeOption(lz4.Block64Kb)), noise(200_000), nil},
		{"declared content size", sized, text[:70_000], nil},
		{"two frames", twoFrames, text[:200_000], nil},
		{"skippable frame", skippable, text[:5000], nil},
		{"empty input", nil, nil, nil},
		{"linked blocks", lz4Linked(false), []byte("abcdefghabcdefgh12345"), nil},
		{"content checksum is not verified", badContentSum, text[:5000], nil},
		{"match into a previous independent block", lz4Linked(true), nil, ErrCorrupt},
		{"wrong declared content size", wrongSize, nil, ErrCorrupt},
		{"bad magic", []byte{1, 2, 3, 4, 5, 6, 7}, nil, ErrCorrupt},
		{"trailing bytes", append(lz4Frame(t, text[:10]), 1, 2), nil, ErrCorrupt},
		{"truncated", lz4Frame(t, text[:5000])[:40], nil, ErrCorrupt},
		{"no end mark", lz4Frame(t, text[:5000], lz4.ChecksumOption(false))[:len(lz4Frame(t, text[:5000], lz4.ChecksumOption(false)))-4], nil, ErrCorrupt},
		{"dictionary id", []byte{0x04, 0x22, 0x4d, 0x18, 0x61, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0}, nil, ErrCorrupt},
		{"version 0", []byte{0x04, 0x22, 0x4d, 0x18, 0x20, 0x40, 0, 0, 0, 0, 0}, nil, ErrCorrupt},
		{"block size code 3", []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x30, 0, 0, 0, 0, 0}, nil, ErrCorrupt},
		{"block over the declared maximum", append([]byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0, 1, 0, 1, 0x80}, make([]byte, 65537)...), nil, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("kept")
			got, err := unlz4(bytes.Clone(prefix), tt.in, 64<<20)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], tt.want) {
				t.Fatalf("got %d bytes, want %d", len(got)-len(prefix), len(tt.want))
			}
		})
	}
}

// Output past the budget is refused, whether a compressed block, a stored one or a later
// frame crosses it, and the output never grows past the budget and one byte.
func TestUnlz4Budget(t *testing.T) {
	text := textLike(300_000)
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"compressed blocks", lz4Frame(t, text, lz4.BlockSizeOption(lz4.Block64Kb))},
		{"one large block", lz4Frame(t, text)},
		{"second frame", append(lz4Frame(t, text[:150_000]), lz4Frame(t, text[150_000:])...)},
		{"stored blocks", lz4Frame(t, noise(300_000), lz4.BlockSizeOption(lz4.Block64Kb))},
	} {
		for _, limit := range []int{0, 1, 65535, 65536, 150_000, len(text) - 1, len(text)} {
			t.Run(fmt.Sprint(tc.name, limit), func(t *testing.T) {
				got, err := unlz4(nil, tc.in, limit)
				want, _ := io.ReadAll(lz4.NewReader(bytes.NewReader(tc.in)))
				switch {
				case len(want) > limit:
					if !errors.Is(err, ErrBudgetExceeded) {
						t.Fatalf("%d bytes within %d: err %v", len(want), limit, err)
					}
				case err != nil || !bytes.Equal(got, want):
					t.Fatalf("%d bytes within %d: err %v, got %d bytes", len(want), limit, err, len(got))
				}
				if len(got) > limit+1 {
					t.Fatalf("output grew to %d bytes past a budget of %d", len(got), limit)
				}
			})
		}
	}
}

// FuzzUnlz4 checks unlz4 against pierrec/lz4's Reader: whatever the Reader decodes within the
// budget, unlz4 decodes to the same bytes (unlz4 also accepts frames whose checksums are
// wrong, since the batch CRC32C covers them).
func FuzzUnlz4(f *testing.F) {
	text := textLike(200_000)
	f.Add(lz4Frame(f, text[:300]))
	f.Add(lz4Frame(f, text[:70_000], lz4.BlockSizeOption(lz4.Block64Kb), lz4.BlockChecksumOption(true)))
	f.Add(lz4Frame(f, text[:1000], lz4.SizeOption(1000), lz4.ChecksumOption(false)))
	f.Add(append(lz4Frame(f, text[:100]), lz4Frame(f, text[100:200])...))
	f.Add(lz4Linked(false))
	f.Add(lz4Frame(f, noise(1000)))
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := unlz4(nil, in, limit)
		if len(got) > limit+1 {
			t.Fatalf("output of %d bytes past the budget", len(got))
		}
		want, rerr := io.ReadAll(io.LimitReader(lz4.NewReader(bytes.NewReader(in)), limit+1))
		if rerr != nil || len(want) > limit {
			return
		}
		if err != nil {
			t.Fatalf("pierrec/lz4 decodes %d bytes, unlz4 fails: %v", len(want), err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("unlz4 decodes %d bytes, pierrec/lz4 %d, and they differ", len(got), len(want))
		}
	})
}
