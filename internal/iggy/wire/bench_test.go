package wire

import (
	"bytes"
	"testing"
)

func BenchmarkBatchEncode1000x1KiB(b *testing.B) {
	payload := bytes.Repeat([]byte{'x'}, 1024)
	hdrs := AppendHeader(nil, HeaderString, []byte("kafka.v"), HeaderRaw, []byte{1})
	batch := NewBatch(1000 * (1024 + len(hdrs)))
	batch.Grow(1000, 1000*(1024+len(hdrs)))
	b.SetBytes(1000 * 1024)
	b.ReportAllocs()
	for b.Loop() {
		batch.Reset()
		for i := range 1000 {
			if err := batch.Add(uint64(1_700_000_000_000_000+i), payload, hdrs); err != nil {
				b.Fatal(err)
			}
		}
		_ = batch.Bytes()
	}
}

func benchPollReply(b *testing.B) []byte {
	payload := bytes.Repeat([]byte{'x'}, 1024)
	batch := NewBatch(0)
	for i := range 1000 {
		if err := batch.Add(uint64(1_700_000_000_000_000+i), payload, nil); err != nil {
			b.Fatal(err)
		}
	}
	stored := bytes.Clone(batch.Bytes())
	StampBatch(stored, 0, 0, 1_700_000_000_000_000)
	return append(AppendPollReplyHeader(nil, 0, 999, 1000), stored...)
}

func BenchmarkDecodePolled1000x1KiB(b *testing.B) {
	for _, verify := range []bool{false, true} {
		name := "noverify"
		if verify {
			name = "verify"
		}
		b.Run(name, func(b *testing.B) {
			reply := benchPollReply(b)
			b.SetBytes(int64(len(reply)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodePolled(reply, verify); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerifyBatch1000x1KiB(b *testing.B) {
	reply := benchPollReply(b)
	batch := reply[PollReplyHeaderSize:]
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := VerifyBatch(batch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBatchChecksum1000(b *testing.B) {
	batch := benchPollReply(b)[PollReplyHeaderSize:]
	h, err := DecodeBatchHeader(batch)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		batchChecksum(&h, batch[BatchHeaderSize:])
	}
}
