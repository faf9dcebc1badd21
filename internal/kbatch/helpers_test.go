package kbatch

import (
	"bytes"
	"hash/crc32"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// wantRecord is what a test expects a decoded record to hold.
type wantRecord struct {
	ts         int64
	key, value []byte
	headers    []RecordHeader
}

// encodeWithKmsg encodes records as one v2 batch using kmsg's encoder (not ours), compressing
// the records section with compress when it is non-nil.
func encodeWithKmsg(t testing.TB, attrs int16, baseTs int64, recs []wantRecord, compress func([]byte) []byte) []byte {
	t.Helper()
	var body []byte
	maxTs := baseTs
	for i, w := range recs {
		r := kmsg.Record{TimestampDelta64: w.ts - baseTs, OffsetDelta: int32(i), Key: w.key, Value: w.value}
		for _, h := range w.headers {
			r.Headers = append(r.Headers, kmsg.Header{Key: string(h.Key), Value: h.Value})
		}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // the zero length varint takes one byte
		body = r.AppendTo(body)
		maxTs = max(maxTs, w.ts)
	}
	if compress != nil {
		body = compress(body)
	}
	return rawBatch(attrs, baseTs, maxTs, int32(len(recs)), body)
}

// rawBatch frames body as a v2 batch with a correct CRC.
func rawBatch(attrs int16, baseTs, maxTs int64, count int32, body []byte) []byte {
	b := kmsg.RecordBatch{
		Length:          int32(HeaderSize - 12 + len(body)),
		Magic:           2,
		Attributes:      attrs,
		LastOffsetDelta: max(count-1, 0),
		FirstTimestamp:  baseTs,
		MaxTimestamp:    maxTs,
		ProducerID:      -1,
		ProducerEpoch:   -1,
		FirstSequence:   -1,
		NumRecords:      count,
		Records:         body,
	}
	raw := b.AppendTo(nil)
	fixCRC(raw)
	return raw
}

func fixCRC(raw []byte) {
	crc := crc32.Checksum(raw[offAttributes:], crc32.MakeTable(crc32.Castagnoli))
	raw[offCRC], raw[offCRC+1], raw[offCRC+2], raw[offCRC+3] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func lz4Bytes(b []byte) []byte {
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zstdBytes(b []byte) []byte {
	e, _ := zstd.NewWriter(nil)
	defer e.Close()
	return e.EncodeAll(b, nil)
}

func rawSnappyBytes(b []byte) []byte { return s2.EncodeSnappy(nil, b) }

// xerialBytes frames snappy the way the Java client does, in blocks of chunk bytes.
func xerialBytes(b []byte, chunk int) []byte {
	out := append([]byte{}, xerialMagic...)
	out = append(out, 0, 0, 0, 1, 0, 0, 0, 1)
	for len(b) > 0 {
		n := min(chunk, len(b))
		block := s2.EncodeSnappy(nil, b[:n])
		out = append(out, byte(len(block)>>24), byte(len(block)>>16), byte(len(block)>>8), byte(len(block)))
		out = append(out, block...)
		b = b[n:]
	}
	return out
}

// decodeAll splits and decodes data and returns every record, copied out of the buffers.
func decodeAll(t testing.TB, data []byte, budget *Budget) ([]Batch, []wantRecord, error) {
	t.Helper()
	batches, err := Split(nil, data)
	if err != nil {
		return nil, nil, err
	}
	var out []wantRecord
	for i := range batches {
		recs, err := batches[i].Decode(budget)
		if err != nil {
			return batches, out, err
		}
		it := recs.Iter()
		var r Record
		for it.Next(&r) {
			w := wantRecord{ts: r.Timestamp, key: clone(r.Key), value: clone(r.Value)}
			for h := r.Headers(); ; {
				k, v, ok := h.Next()
				if !ok {
					break
				}
				w.headers = append(w.headers, RecordHeader{Key: clone(k), Value: clone(v)})
			}
			out = append(out, w)
		}
		recs.Release()
	}
	return batches, out, nil
}

// clone copies b keeping nil and empty apart.
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func checkRecords(t *testing.T, got, want []wantRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ts != w.ts || !sameBytes(g.key, w.key) || !sameBytes(g.value, w.value) || len(g.headers) != len(w.headers) {
			t.Fatalf("record %d: got ts=%d key=%q(nil=%v) value=%.40q(nil=%v) %d headers; want ts=%d key=%q(nil=%v) value=%.40q(nil=%v) %d headers",
				i, g.ts, g.key, g.key == nil, g.value, g.value == nil, len(g.headers),
				w.ts, w.key, w.key == nil, w.value, w.value == nil, len(w.headers))
		}
		for j := range w.headers {
			if !bytes.Equal(g.headers[j].Key, w.headers[j].Key) || !sameBytes(g.headers[j].Value, w.headers[j].Value) {
				t.Fatalf("record %d header %d: got %q=%q(nil=%v), want %q=%q(nil=%v)", i, j,
					g.headers[j].Key, g.headers[j].Value, g.headers[j].Value == nil,
					w.headers[j].Key, w.headers[j].Value, w.headers[j].Value == nil)
			}
		}
	}
}

// sampleRecords covers the shapes a decoder must keep apart: null and empty keys and values,
// duplicate header names in order, null and empty header values, and a compressible value
// large enough that every codec actually compresses.
func sampleRecords(baseTs int64) []wantRecord {
	big := bytes.Repeat([]byte("compressible value "), 200)
	return []wantRecord{
		{ts: baseTs, key: []byte("k1"), value: []byte("v1")},
		{ts: baseTs + 1, key: nil, value: big},
		{ts: baseTs + 2, key: []byte{}, value: nil},
		{ts: baseTs - 5, key: []byte("k"), value: []byte{}},
		{ts: baseTs + 3, value: big, headers: []RecordHeader{
			{Key: []byte("dup"), Value: []byte("1")},
			{Key: []byte("x"), Value: nil},
			{Key: []byte("dup"), Value: []byte("2")},
			{Key: []byte(""), Value: []byte{}},
		}},
	}
}
