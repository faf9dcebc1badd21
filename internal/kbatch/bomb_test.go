package kbatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// Decompression bombs: small inputs that inflate (or declare that they inflate) far past the
// budget must be refused with memory bounded by the budget, not by the inflated size.

const (
	bombBudget = 1 << 20
	// allocLimit is what one refused decode may allocate in total: the budget plus codec
	// state, and far below what any bomb below would inflate to.
	allocLimit = 16 << 20
)

// snappyDeclaredBomb is 1 KiB of raw snappy whose header declares 1 GiB of output.
func snappyDeclaredBomb() []byte {
	b := binary.AppendUvarint(nil, 1<<30)
	return append(b, make([]byte, 1<<10-len(b))...)
}

// xerialDeclaredBomb is xerial-framed snappy whose chunks each declare 256 MiB.
func xerialDeclaredBomb() []byte {
	out := append([]byte{}, xerialMagic...)
	out = append(out, 0, 0, 0, 1, 0, 0, 0, 1)
	chunk := binary.AppendUvarint(nil, 256<<20)
	chunk = append(chunk, make([]byte, 60)...)
	for range 16 {
		out = binary.BigEndian.AppendUint32(out, uint32(len(chunk)))
		out = append(out, chunk...)
	}
	return out
}

func TestDecompressionBombs(t *testing.T) {
	zeros := make([]byte, 64<<20)
	for _, tc := range []struct {
		name  string
		codec Codec
		input []byte
	}{
		{"zstd rle 1GiB", CodecZstd, testutil.ZstdRLEBomb(8192)},
		{"zstd declared 1GiB", CodecZstd, testutil.ZstdDeclaredBomb()},
		{"snappy declared 1GiB", CodecSnappy, snappyDeclaredBomb()},
		{"xerial declared 4GiB", CodecSnappy, xerialDeclaredBomb()},
		{"gzip 64MiB", CodecGzip, gzipBytes(zeros)},
		{"lz4 64MiB", CodecLZ4, lz4Bytes(zeros)},
		{"zstd 64MiB", CodecZstd, zstdBytes(zeros)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := rawBatch(int16(tc.codec), 0, 0, 1, tc.input)
			batches, err := Split(nil, raw)
			if err != nil {
				t.Fatal(err)
			}
			// Warm the codec's pooled state so the measurement counts only this decode.
			warm := encodeWithKmsg(t, int16(tc.codec), 0, []wantRecord{{value: []byte("warm")}},
				map[Codec]func([]byte) []byte{CodecGzip: gzipBytes, CodecSnappy: rawSnappyBytes, CodecLZ4: lz4Bytes, CodecZstd: zstdBytes}[tc.codec])
			if _, _, err := decodeAll(t, warm, NewBudget(bombBudget)); err != nil {
				t.Fatal(err)
			}

			budget := NewBudget(bombBudget)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			recs, err := batches[0].Decode(budget)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrBudgetExceeded) {
				recs.Release()
				t.Fatalf("got %v, want ErrBudgetExceeded", err)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d-byte input refused after allocating %d bytes", len(tc.input), allocated)
			if allocated > allocLimit {
				t.Fatalf("allocated %d bytes refusing a bomb with a %d-byte budget", allocated, bombBudget)
			}
			if budget.Remaining() != bombBudget {
				t.Fatalf("a refused batch charged the budget: %d left", budget.Remaining())
			}
		})
	}
}

// TestZstdBombReallyInflates guards the bomb itself: with a budget large enough the RLE
// frame decodes to exactly its advertised size, so the refusal above is the budget's doing.
func TestZstdBombReallyInflates(t *testing.T) {
	out, err := decompress(nil, testutil.ZstdRLEBomb(64), CodecZstd, 8<<20)
	if err != nil || len(out) != 8<<20 || !bytes.Equal(out[:16], make([]byte, 16)) {
		t.Fatalf("len %d, %v", len(out), err)
	}
}
