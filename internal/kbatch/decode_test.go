package kbatch

import (
	"bytes"
	"errors"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const testBudget = 64 << 20

func TestDecodeKgoBatches(t *testing.T) {
	const baseTs = 1_700_000_000_123
	want := sampleRecords(baseTs)
	for _, tc := range []struct {
		codec kgo.CompressionCodec
		want  Codec
	}{
		{kgo.NoCompression(), CodecNone},
		{kgo.GzipCompression(), CodecGzip},
		{kgo.SnappyCompression(), CodecSnappy},
		{kgo.Lz4Compression(), CodecLZ4},
		{kgo.ZstdCompression(), CodecZstd},
	} {
		t.Run(tc.want.String(), func(t *testing.T) {
			var recs []*kgo.Record
			for _, w := range want {
				r := &kgo.Record{Key: w.key, Value: w.value, Timestamp: time.UnixMilli(w.ts)}
				for _, h := range w.headers {
					r.Headers = append(r.Headers, kgo.RecordHeader{Key: string(h.Key), Value: h.Value})
				}
				recs = append(recs, r)
			}
			// Usually one batch; on a loaded machine franz-go may send the records before and
			// after its metadata arrives in two requests, so every batch it sent is decoded.
			raws := kgoBatches(t, tc.codec, recs)
			budget := NewBudget(testBudget)
			batches, got, err := decodeAll(t, bytes.Join(raws, nil), budget)
			if err != nil {
				t.Fatal(err)
			}
			// franz-go leaves a batch uncompressed when compressing would not make it smaller
			// (a lone record split off): at least one batch must carry the codec.
			var n int32
			withCodec := false
			for _, b := range batches {
				h := b.Header
				if (b.Codec() != tc.want && b.Codec() != CodecNone) || h.ProducerID != -1 || h.Transactional() || h.Control() || h.LogAppendTime() {
					t.Fatalf("unexpected batch: codec %v, header %+v; want codec %v", b.Codec(), h, tc.want)
				}
				withCodec = withCodec || b.Codec() == tc.want
				n += h.NumRecords
			}
			if !withCodec || n != int32(len(want)) {
				t.Fatalf("%d batches of %d records (codec %v seen: %v), want %d records", len(batches), n, tc.want, withCodec, len(want))
			}
			if tc.want == CodecNone && budget.Remaining() != testBudget {
				t.Fatalf("uncompressed batch charged the budget: %d left", budget.Remaining())
			}
			if tc.want != CodecNone && budget.Remaining() >= testBudget {
				t.Fatalf("compressed batch did not charge the budget")
			}
			checkRecords(t, got, want)
		})
	}
}

func TestDecodeCodecs(t *testing.T) {
	const baseTs = 1_000
	want := sampleRecords(baseTs)
	for _, tc := range []struct {
		name     string
		codec    Codec
		compress func([]byte) []byte
	}{
		{"none", CodecNone, nil},
		{"gzip", CodecGzip, gzipBytes},
		{"snappy-raw", CodecSnappy, rawSnappyBytes},
		{"snappy-xerial", CodecSnappy, func(b []byte) []byte { return xerialBytes(b, 1000) }},
		{"lz4", CodecLZ4, lz4Bytes},
		{"zstd", CodecZstd, zstdBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := encodeWithKmsg(t, int16(tc.codec), baseTs, want, tc.compress)
			_, got, err := decodeAll(t, raw, NewBudget(testBudget))
			if err != nil {
				t.Fatal(err)
			}
			checkRecords(t, got, want)
		})
	}
}

func TestSplitSeveralBatches(t *testing.T) {
	a := encodeWithKmsg(t, 0, 10, []wantRecord{{ts: 10, value: []byte("a")}}, nil)
	b := encodeWithKmsg(t, int16(CodecGzip), 20, []wantRecord{{ts: 20, value: []byte("b")}, {ts: 21, value: []byte("c")}}, gzipBytes)
	batches, got, err := decodeAll(t, append(append([]byte{}, a...), b...), NewBudget(testBudget))
	if err != nil {
		t.Fatal(err)
	}
	if len(batches) != 2 {
		t.Fatalf("got %d batches", len(batches))
	}
	checkRecords(t, got, []wantRecord{{ts: 10, value: []byte("a")}, {ts: 20, value: []byte("b")}, {ts: 21, value: []byte("c")}})
}

func TestSplitEmpty(t *testing.T) {
	batches, err := Split(nil, nil)
	if err != nil || len(batches) != 0 {
		t.Fatalf("got %d batches, %v", len(batches), err)
	}
}

func TestFlagsSurfaced(t *testing.T) {
	for _, tc := range []struct {
		attrs                   int16
		txn, control, logAppend bool
	}{
		{0x10, true, false, false},
		{0x20, false, true, false},
		{0x30, true, true, false},
		{0x08, false, false, true},
	} {
		raw := encodeWithKmsg(t, tc.attrs, 5, []wantRecord{{ts: 5, value: []byte("v")}}, nil)
		batches, err := Split(nil, raw)
		if err != nil {
			t.Fatal(err)
		}
		h := batches[0].Header
		if h.Transactional() != tc.txn || h.Control() != tc.control || h.LogAppendTime() != tc.logAppend {
			t.Errorf("attrs %#x: txn=%v control=%v logAppend=%v", tc.attrs, h.Transactional(), h.Control(), h.LogAppendTime())
		}
	}
}

func TestHeaderFieldsSurfaced(t *testing.T) {
	raw := encodeWithKmsg(t, 0, 5, []wantRecord{{ts: 5, value: []byte("v")}}, nil)
	// producer id 7, epoch 3, base sequence 42, base offset 9, leader epoch 4
	copy(raw[43:], []byte{0, 0, 0, 0, 0, 0, 0, 7, 0, 3, 0, 0, 0, 42})
	copy(raw[0:], []byte{0, 0, 0, 0, 0, 0, 0, 9})
	copy(raw[12:], []byte{0, 0, 0, 4})
	fixCRC(raw)
	batches, err := Split(nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	h := batches[0].Header
	if h.ProducerID != 7 || h.ProducerEpoch != 3 || h.BaseSequence != 42 || h.BaseOffset != 9 ||
		h.PartitionLeaderEpoch != 4 || h.BaseTimestamp != 5 || h.MaxTimestamp != 5 {
		t.Fatalf("header %+v", h)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := encodeWithKmsg(t, 0, 5, []wantRecord{{ts: 5, key: []byte("k"), value: []byte("v")}, {ts: 6, value: []byte("w")}}, nil)
	body := good[HeaderSize:]
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"crc", mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), ErrCorrupt},
		{"crc field", mutate(func(b []byte) []byte { b[offCRC] ^= 1; return b }), ErrCorrupt},
		{"trailing bytes", append(append([]byte{}, good...), 1, 2, 3), ErrInvalidRecord},
		{"trailing partial batch", append(append([]byte{}, good...), good[:30]...), ErrInvalidRecord},
		{"truncated", good[:len(good)-1], ErrInvalidRecord},
		{"magic 1", mutate(func(b []byte) []byte { b[offMagic] = 1; return b }), ErrInvalidRecord},
		{"length too small", mutate(func(b []byte) []byte { b[11] = 10; b[10], b[9], b[8] = 0, 0, 0; return b }), ErrCorrupt},
		{"count too high", rawBatch(0, 5, 6, 3, body), ErrInvalidRecord},
		{"count too low", rawBatch(0, 5, 6, 1, body), ErrInvalidRecord},
		{"negative count", rawBatch(0, 5, 6, -1, body), ErrCorrupt},
		{"unknown codec", rawBatch(5, 5, 6, 2, body), ErrCorrupt},
		{"record length past end", rawBatch(0, 5, 5, 1, []byte{0x7e, 0, 0, 0}), ErrCorrupt},
		{"zero record length", rawBatch(0, 5, 5, 1, []byte{0x00}), ErrCorrupt},
		{"bad varint", rawBatch(0, 5, 5, 1, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), ErrCorrupt},
		// length 6: attrs, ts 0, offset 0, key -1, value len 50 (only 1 byte left)
		{"value length past record", rawBatch(0, 5, 5, 1, []byte{12, 0, 0, 0, 1, 100, 0}), ErrCorrupt},
		{"key length below -1", rawBatch(0, 5, 5, 1, []byte{12, 0, 0, 0, 3, 1, 0}), ErrCorrupt},
		// header count 100 in a record with 1 byte left
		{"header count too high", rawBatch(0, 5, 5, 1, []byte{14, 0, 0, 0, 1, 1, 200, 1, 0}), ErrCorrupt},
		// header count 1, name length -1
		{"null header name", rawBatch(0, 5, 5, 1, []byte{14, 0, 0, 0, 1, 1, 2, 1, 1}), ErrCorrupt},
		// header count 0 but a byte remains in the record
		{"bytes after headers", rawBatch(0, 5, 5, 1, []byte{12, 0, 0, 0, 1, 1, 0, 9}), ErrCorrupt},
		{"garbage gzip", rawBatch(int16(CodecGzip), 5, 5, 1, []byte("not gzip")), ErrCorrupt},
		{"garbage snappy", rawBatch(int16(CodecSnappy), 5, 5, 1, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), ErrCorrupt},
		{"truncated xerial", rawBatch(int16(CodecSnappy), 5, 5, 1, xerialBytes(body, 100)[:20]), ErrCorrupt},
		{"garbage lz4", rawBatch(int16(CodecLZ4), 5, 5, 1, []byte("not lz4 at all")), ErrCorrupt},
		{"garbage zstd", rawBatch(int16(CodecZstd), 5, 5, 1, []byte("not zstd at all")), ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decodeAll(t, tc.data, NewBudget(testBudget))
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDecodeNilBudget(t *testing.T) {
	raw := encodeWithKmsg(t, int16(CodecGzip), 5, []wantRecord{{ts: 5, value: []byte("v")}}, gzipBytes)
	if _, _, err := decodeAll(t, raw, nil); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("got %v", err)
	}
}

func TestBudgetSharedAcrossBatches(t *testing.T) {
	value := bytes.Repeat([]byte{'x'}, 10_000)
	one := encodeWithKmsg(t, int16(CodecZstd), 1, []wantRecord{{ts: 1, value: value}}, zstdBytes)
	recsSize := len(encodeWithKmsg(t, 0, 1, []wantRecord{{ts: 1, value: value}}, nil)) - HeaderSize
	budget := NewBudget(2*recsSize + recsSize/2) // two batches fit, the third does not
	data := append(append(append([]byte{}, one...), one...), one...)
	batches, err := Split(nil, data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range batches {
		recs, err := batches[i].Decode(budget)
		if i < 2 && err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if i == 2 && !errors.Is(err, ErrBudgetExceeded) {
			t.Fatalf("batch 3: got %v, want budget exceeded", err)
		}
		recs.Release()
	}
	if budget.Remaining() != recsSize/2 {
		t.Fatalf("remaining %d, want %d", budget.Remaining(), recsSize/2)
	}
}

func TestIterateWithoutAllocating(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	var recs []wantRecord
	for i := range 1000 {
		recs = append(recs, wantRecord{ts: int64(i), key: []byte("key"), value: []byte("value"),
			headers: []RecordHeader{{Key: []byte("h"), Value: []byte("v")}}})
	}
	raw := encodeWithKmsg(t, 0, 0, recs, nil)
	batches := make([]Batch, 0, 1)
	allocs := testing.AllocsPerRun(20, func() {
		var err error
		batches, err = Split(batches[:0], raw)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := batches[0].Decode(nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		it := rs.Iter()
		var r Record
		for it.Next(&r) {
			for h := r.Headers(); ; {
				if _, _, ok := h.Next(); !ok {
					break
				}
			}
			n++
		}
		if n != 1000 {
			t.Fatalf("iterated %d", n)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per decode of an uncompressed 1000-record batch, want 0", allocs)
	}
}

// Kafka's LogValidator.validateBatch rules for batches from clients, all INVALID_RECORD.
func TestClientBatchRules(t *testing.T) {
	ok := Header{LastOffsetDelta: 2, NumRecords: 3, ProducerID: -1, BaseSequence: -1}
	for _, tc := range []struct {
		name  string
		edit  func(*Header)
		valid bool
	}{
		{"consistent", func(*Header) {}, true},
		{"idempotent with sequence", func(h *Header) { h.ProducerID, h.BaseSequence = 7, 0 }, true},
		{"log append time set by the client", func(h *Header) { h.Attributes = attrLogAppendTime }, true},
		{"last offset delta past the count", func(h *Header) { h.LastOffsetDelta = 5 }, false},
		{"last offset delta short of the count", func(h *Header) { h.LastOffsetDelta = 0 }, false},
		{"negative last offset delta", func(h *Header) { h.LastOffsetDelta = -1 }, false},
		{"empty batch", func(h *Header) { h.LastOffsetDelta, h.NumRecords = -1, 0 }, false},
		{"zero count with delta 0", func(h *Header) { h.LastOffsetDelta, h.NumRecords = 0, 0 }, false},
		{"control batch", func(h *Header) { h.Attributes = attrControl }, false},
		{"producer id without sequence", func(h *Header) { h.ProducerID = 7 }, false},
	} {
		h := ok
		tc.edit(&h)
		err := h.CheckFromClient()
		if tc.valid != (err == nil) || err != nil && !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
