package kbatch

import (
	"testing"
)

// fuzzSeeds are well-formed batches of every codec; the fuzzer mutates them.
func fuzzSeeds(t testing.TB) [][]byte {
	recs := sampleRecords(1_700_000_000_000)
	var seeds [][]byte
	for codec, compress := range map[Codec]func([]byte) []byte{
		CodecNone: nil, CodecGzip: gzipBytes, CodecSnappy: rawSnappyBytes, CodecLZ4: lz4Bytes, CodecZstd: zstdBytes,
	} {
		seeds = append(seeds, encodeWithKmsg(t, int16(codec), 1_700_000_000_000, recs, compress))
	}
	seeds = append(seeds, encodeWithKmsg(t, int16(CodecSnappy), 0, recs, func(b []byte) []byte { return xerialBytes(b, 512) }))
	return seeds
}

// FuzzDecodeBatch feeds arbitrary bytes to Split and Decode (every codec), and checks that
// whatever decodes re-encodes through the Builder to the same records.
func FuzzDecodeBatch(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		batches, err := Split(nil, data)
		if err != nil {
			return
		}
		budget := NewBudget(1 << 20)
		for i := range batches {
			recs, err := batches[i].Decode(budget)
			if err != nil {
				continue
			}
			var want []wantRecord
			var b Builder
			b.Begin(nil, -1)
			it := recs.Iter()
			var r Record
			for n := int64(0); it.Next(&r); n++ {
				w := wantRecord{ts: r.Timestamp, key: clone(r.Key), value: clone(r.Value)}
				for h := r.Headers(); ; {
					k, v, ok := h.Next()
					if !ok {
						break
					}
					w.headers = append(w.headers, RecordHeader{Key: clone(k), Value: clone(v)})
				}
				if len(w.headers) != r.NumHeaders {
					t.Fatalf("iterated %d headers, record declares %d", len(w.headers), r.NumHeaders)
				}
				want = append(want, w)
				if err := b.Append(n, w.ts, w.key, w.value, w.headers); err != nil {
					t.Fatal(err)
				}
			}
			recs.Release()
			if len(want) != int(batches[i].NumRecords) {
				t.Fatalf("iterated %d records, batch declares %d", len(want), batches[i].NumRecords)
			}
			_, got, err := decodeAll(t, b.Finish(), nil)
			if err != nil {
				t.Fatalf("re-encoded batch does not decode: %v", err)
			}
			checkRecords(t, got, want)
		}
	})
}
