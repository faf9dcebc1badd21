package kbatch

import (
	"bytes"
	"testing"
)

// benchBatch is 1000 records with a 16-byte key, a 200-byte value and two headers.
func benchBatch(b *testing.B, codec Codec, compress func([]byte) []byte) []byte {
	var recs []wantRecord
	value := bytes.Repeat([]byte("benchmark value "), 12)
	for i := range 1000 {
		recs = append(recs, wantRecord{ts: 1_700_000_000_000 + int64(i), key: []byte("key-0000000000000"), value: value,
			headers: []RecordHeader{{Key: []byte("trace"), Value: []byte("abc")}, {Key: []byte("type"), Value: []byte("x")}}})
	}
	return encodeWithKmsg(b, int16(codec), 1_700_000_000_000, recs, compress)
}

func BenchmarkDecodeIterate(b *testing.B) {
	for _, tc := range []struct {
		name     string
		codec    Codec
		compress func([]byte) []byte
	}{
		{"none", CodecNone, nil},
		{"gzip", CodecGzip, gzipBytes},
		{"snappy", CodecSnappy, rawSnappyBytes},
		{"lz4", CodecLZ4, lz4Bytes},
		{"zstd", CodecZstd, zstdBytes},
	} {
		b.Run(tc.name, func(b *testing.B) {
			raw := benchBatch(b, tc.codec, tc.compress)
			batches := make([]Batch, 0, 1)
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				batches, _ = Split(batches[:0], raw)
				recs, err := batches[0].Decode(NewBudget(64 << 20))
				if err != nil {
					b.Fatal(err)
				}
				it := recs.Iter()
				var r Record
				for it.Next(&r) {
					for h := r.Headers(); ; {
						if _, _, ok := h.Next(); !ok {
							break
						}
					}
				}
				recs.Release()
			}
		})
	}
}

func BenchmarkBuilder(b *testing.B) {
	key, value := []byte("key-0000000000000"), bytes.Repeat([]byte("benchmark value "), 12)
	headers := []RecordHeader{{Key: []byte("trace"), Value: []byte("abc")}, {Key: []byte("type"), Value: []byte("x")}}
	var bld Builder
	buf := make([]byte, 0, 1<<20)
	b.ReportAllocs()
	for b.Loop() {
		bld.Begin(buf[:0], -1)
		for i := range 1000 {
			bld.Append(int64(i), int64(i), key, value, headers)
		}
		buf = bld.Finish()
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkDecodeLZ4TextLike decodes one franz-go-sized batch (1000 records of 1 KiB) whose
// values are words from a small vocabulary, so lz4 shrinks it to about 40% as it does text
// logs, rather than to almost nothing as with BenchmarkDecodeIterate's repeated value.
func BenchmarkDecodeLZ4TextLike(b *testing.B) {
	words := []string{"gateway ", "kafka ", "iggy ", "record ", "batch ", "offset ", "partition ", "topic ",
		"stream ", "fetch ", "produce ", "consumer ", "group ", "commit ", "lag ", "error "}
	var recs []wantRecord
	seed := uint64(1)
	for i := range 1000 {
		var v []byte
		for len(v) < 1024 {
			seed = seed*6364136223846793005 + 1442695040888963407
			v = append(v, words[seed>>60]...)
		}
		recs = append(recs, wantRecord{ts: 1_700_000_000_000 + int64(i), value: v[:1024]})
	}
	raw := encodeWithKmsg(b, int16(CodecLZ4), 1_700_000_000_000, recs, lz4Bytes)
	batches := make([]Batch, 0, 1)
	b.SetBytes(1000 * 1024)
	b.ReportAllocs()
	for b.Loop() {
		batches, _ = Split(batches[:0], raw)
		recs, err := batches[0].Decode(NewBudget(64 << 20))
		if err != nil {
			b.Fatal(err)
		}
		recs.Release()
	}
}
