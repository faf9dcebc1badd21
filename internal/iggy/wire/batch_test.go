package wire

import (
	"bytes"
	"errors"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// refFrame builds a frame exactly as Iggy's protocol 0.11.0 lays it out.
func refFrame(id [16]byte, offsetDelta, tsDelta uint32, payload, headers []byte) []byte {
	f := make([]byte, 48)
	copy(f[8:], id[:])
	copy(f[24:], u32(offsetDelta))
	copy(f[28:], u32(tsDelta))
	copy(f[32:], u32(uint32(len(headers))))
	copy(f[36:], u32(uint32(len(payload))))
	f = append(f, payload...)
	f = append(f, headers...)
	copy(f[0:], u64(xxh3.Hash(f[8:])))
	return f
}

// refBatch builds a producer batch as Iggy's protocol 0.11.0 lays it out, hashing the checksum input
// in one shot the way the official Go SDK does.
func refBatch(originTS uint64, frames ...[]byte) []byte {
	blob := cat(frames...)
	length := uint64(256 + len(blob))
	in := cat(u64(0), u64(0), u64(0), u64(originTS), u64(length), u32(uint32(len(frames))))
	for _, f := range frames {
		in = append(in, f[:8]...)
	}
	h := make([]byte, 256)
	copy(h[24:], u64(originTS))
	copy(h[32:], u64(length))
	copy(h[40:], u64(xxh3.Hash(in)))
	copy(h[48:], u32(uint32(len(frames))))
	return cat(h, blob)
}

func TestBatchGolden(t *testing.T) {
	id1 := [16]byte{1}
	id2 := [16]byte{2}
	hdrs := AppendHeader(nil, HeaderString, []byte("k"), HeaderRaw, []byte("v"))
	tests := []struct {
		name string
		add  func(b *Batch) error
		want []byte
	}{{
		name: "in order",
		add: func(b *Batch) error {
			if err := b.AddWithID(id1, 1000, []byte("hello"), nil); err != nil {
				return err
			}
			return b.AddWithID(id2, 1500, []byte("w"), hdrs)
		},
		want: refBatch(1000, refFrame(id1, 0, 0, []byte("hello"), nil), refFrame(id2, 1, 500, []byte("w"), hdrs)),
	}, {
		name: "out of order rebases on the minimum",
		add: func(b *Batch) error {
			if err := b.AddWithID(id1, 5000, []byte("a"), hdrs); err != nil {
				return err
			}
			if err := b.AddWithID(id2, 2000, []byte("b"), nil); err != nil {
				return err
			}
			return b.AddWithID(id1, 9000, []byte("c"), nil)
		},
		want: refBatch(2000,
			refFrame(id1, 0, 3000, []byte("a"), hdrs),
			refFrame(id2, 1, 0, []byte("b"), nil),
			refFrame(id1, 2, 7000, []byte("c"), nil)),
	}, {
		name: "finished, then more added in and out of order",
		add: func(b *Batch) error {
			if err := b.AddWithID(id1, 5000, []byte("a"), nil); err != nil {
				return err
			}
			_ = b.Bytes()
			if err := b.AddWithID(id2, 6000, []byte("b"), hdrs); err != nil {
				return err
			}
			_ = b.Bytes()
			if err := b.AddWithID(id1, 1000, []byte("c"), nil); err != nil {
				return err
			}
			_ = b.Bytes()
			return b.AddWithID(id2, 1500, []byte("d"), nil)
		},
		want: refBatch(1000,
			refFrame(id1, 0, 4000, []byte("a"), nil),
			refFrame(id2, 1, 5000, []byte("b"), hdrs),
			refFrame(id1, 2, 0, []byte("c"), nil),
			refFrame(id2, 3, 500, []byte("d"), nil)),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBatch(64)
			if err := tt.add(b); err != nil {
				t.Fatal(err)
			}
			checkBytes(t, "batch", b.Bytes(), tt.want)
			checkBytes(t, "batch again", b.Bytes(), tt.want)
			if _, err := VerifyBatch(b.Bytes()); err != nil {
				t.Fatalf("VerifyBatch: %v", err)
			}
			b.Reset()
			if b.Len() != 0 || b.Size() != BatchHeaderSize {
				t.Fatalf("after Reset: len %d size %d", b.Len(), b.Size())
			}
			if err := tt.add(b); err != nil {
				t.Fatal(err)
			}
			checkBytes(t, "reused batch", b.Bytes(), tt.want)
		})
	}
}

func TestBatchAddErrors(t *testing.T) {
	b := NewBatch(0)
	if err := b.Add(1, nil, nil); CodeOf(err) != codeInvalidPayloadLength {
		t.Errorf("empty payload: %v", err)
	}
	if err := b.Add(1, []byte("x"), []byte{1, 2}); err == nil {
		t.Error("bad headers accepted")
	}
	if err := b.Add(1<<40, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(1<<40+1<<32, []byte("x"), nil); CodeOf(err) != codeInvalidTimestampDelta {
		t.Errorf("timestamp 2^32 µs later: %v", err)
	}
	if err := b.Add(1<<40-1<<32, []byte("x"), nil); CodeOf(err) != codeInvalidTimestampDelta {
		t.Errorf("timestamp 2^32 µs earlier: %v", err)
	}
	if b.Len() != 1 {
		t.Fatalf("rejected messages were added: len %d", b.Len())
	}
}

func TestBatchRandomIDs(t *testing.T) {
	b := NewBatch(0)
	for range 3 {
		if err := b.Add(0, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	h, rec, _, err := SplitBatch(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[16]byte]bool{}
	_ = WalkFrames(&h, rec, true, func(f Frame) error { seen[f.ID] = true; return nil })
	if len(seen) != 3 || seen[[16]byte{}] {
		t.Fatalf("ids not distinct and non-zero: %v", seen)
	}
	if h.OriginTimestamp == 0 {
		t.Fatal("timestamp 0 was not replaced by now")
	}
}

func TestVerifyBatchRejects(t *testing.T) {
	good := refBatch(10, refFrame([16]byte{1}, 0, 0, []byte("abc"), nil), refFrame([16]byte{2}, 1, 0, []byte("de"), nil))
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	tests := map[string]struct {
		b    []byte
		code uint32
	}{
		"payload byte flipped": {mut(func(b []byte) []byte { b[256+48] ^= 1; return b }), codeInvalidMessageChecksum},
		"batch checksum":       {mut(func(b []byte) []byte { b[40] ^= 1; return b }), codeInvalidBatchChecksum},
		"origin ts changed":    {mut(func(b []byte) []byte { b[24] ^= 1; return b }), codeInvalidBatchChecksum},
		"reserved header byte": {mut(func(b []byte) []byte { b[100] = 1; return b }), codeInvalidFormat},
		"reserved frame byte":  {mut(func(b []byte) []byte { b[256+40] = 1; return b }), codeInvalidFormat},
		"count too high":       {mut(func(b []byte) []byte { b[48] = 3; return b }), codeInvalidFormat},
		"count too low":        {mut(func(b []byte) []byte { b[48] = 1; return b }), codeInvalidFormat},
		"length short":         {mut(func(b []byte) []byte { b[32]--; return b }), codeInvalidFormat},
		"trailing byte":        {append(bytes.Clone(good), 0), codeInvalidFormat},
		"payload length huge":  {mut(func(b []byte) []byte { copy(b[256+36:], u32(0xfffffff0)); return b }), codeInvalidFormat},
		"empty payload":        {refBatch(1, refFrame([16]byte{}, 0, 0, nil, nil)), codeEmptyMessagePayload},
		"bad headers":          {refBatch(1, refFrame([16]byte{}, 0, 0, []byte("x"), []byte{0, 1, 0, 0, 0, 'k'})), codeInvalidHeaderKind},
		"empty batch":          {refBatch(1), codeInvalidFormat},
		"truncated":            {good[:300], codeInvalidFormat},
	}
	if _, err := VerifyBatch(good); err != nil {
		t.Fatalf("reference batch rejected: %v", err)
	}
	for name, tt := range tests {
		_, err := VerifyBatch(tt.b)
		if err == nil || CodeOf(err) != tt.code {
			t.Errorf("%s: %v (code %d), want code %d", name, err, CodeOf(err), tt.code)
		}
	}
}

func TestStampAndSlice(t *testing.T) {
	b := NewBatch(0)
	for i, p := range []string{"m0", "m1", "m2", "m3"} {
		if err := b.AddWithID([16]byte{byte(i + 1)}, 100+uint64(i)*10, []byte(p), nil); err != nil {
			t.Fatal(err)
		}
	}
	stored := bytes.Clone(b.Bytes())
	StampBatch(stored, 3, 40, 777)
	h, err := VerifyBatch(stored)
	if err != nil {
		t.Fatalf("stamped batch fails verification: %v", err)
	}
	if h.PartitionID != 3 || h.BaseOffset != 40 || h.BaseTimestamp != 777 {
		t.Fatalf("stamped header %+v", h)
	}

	reply := AppendPollReplyHeader(nil, 3, 43, 2)
	reply, err = AppendBatchSlice(reply, stored, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyBatch(reply[PollReplyHeaderSize:]); err != nil {
		t.Fatalf("slice fails verification: %v", err)
	}
	p, err := DecodePolled(reply, true)
	if err != nil {
		t.Fatal(err)
	}
	if p.PartitionID != 3 || p.CurrentOffset != 43 || len(p.Messages) != 2 {
		t.Fatalf("polled %+v", p)
	}
	for i, m := range p.Messages {
		n := i + 1
		if m.Offset != 40+uint64(n) || m.Timestamp != 777 || m.OriginTimestamp != 100+uint64(n)*10 ||
			string(m.Payload) != "m"+string(rune('0'+n)) || m.ID != [16]byte{byte(n + 1)} {
			t.Errorf("message %d: %+v", i, m)
		}
	}
	for _, bad := range [][2]int{{-1, 1}, {0, 0}, {3, 2}, {4, 1}} {
		if _, err := AppendBatchSlice(nil, stored, bad[0], bad[1]); err == nil {
			t.Errorf("slice %v accepted", bad)
		}
	}
}

func TestDecodePolledGolden(t *testing.T) {
	f0 := refFrame([16]byte{1}, 0, 0, []byte("a"), nil)
	f1 := refFrame([16]byte{2}, 1, 25, []byte("bb"), AppendHeader(nil, HeaderString, []byte("h"), HeaderString, []byte("v")))
	rec1 := refBatch(1000, f0, f1)
	copy(rec1[8:], u64(10))  // base offset (checksum no longer matters on a poll)
	copy(rec1[16:], u64(55)) // base timestamp
	rec2 := refBatch(2000, refFrame([16]byte{3}, 0, 0, []byte("c"), nil))
	copy(rec2[8:], u64(12))
	body := cat(u32(0), u64(12), u32(3), rec1, rec2)
	p, err := DecodePolled(body, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		off, ts, origin uint64
		payload         string
	}{{10, 55, 1000, "a"}, {11, 55, 1025, "bb"}, {12, 0, 2000, "c"}}
	if len(p.Messages) != 3 {
		t.Fatalf("%d messages", len(p.Messages))
	}
	for i, w := range want {
		m := p.Messages[i]
		if m.Offset != w.off || m.Timestamp != w.ts || m.OriginTimestamp != w.origin || string(m.Payload) != w.payload {
			t.Errorf("message %d = %+v, want %+v", i, m, w)
		}
	}
	if len(p.Messages[1].Headers) == 0 {
		t.Error("headers lost")
	}

	empty, err := DecodePolled(cat(u32(ResyncPartition), u64(0), u32(0)), true)
	if err != nil || empty.PartitionID != ResyncPartition || len(empty.Messages) != 0 {
		t.Fatalf("empty poll: %+v %v", empty, err)
	}
	bad := map[string][]byte{
		"count mismatch":  cat(u32(0), u64(12), u32(2), rec1, rec2),
		"count too large": cat(u32(0), u64(12), u32(1000), rec1),
		"short header":    cat(u32(0), u64(12)),
		"cut record":      cat(u32(0), u64(12), u32(3), rec1, rec2[:len(rec2)-1]),
	}
	for name, b := range bad {
		if _, err := DecodePolled(b, true); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	flipped := bytes.Clone(body)
	flipped[16+256+48] ^= 1
	if _, err := DecodePolled(flipped, true); CodeOf(err) != codeInvalidMessageChecksum {
		t.Errorf("flipped payload with verify: %v", err)
	}
	if _, err := DecodePolled(flipped, false); err != nil {
		t.Errorf("flipped payload without verify: %v", err)
	}
	if _, err := DecodePolled(cat(u32(0), u64(0), u32(1), make([]byte, 40)), true); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
}

func TestBatchEncodeAllocs(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	payload := bytes.Repeat([]byte{'x'}, 1024)
	hdrs := AppendHeader(nil, HeaderString, []byte("kafka.v"), HeaderRaw, []byte{1})
	b := NewBatch(1000 * (1024 + len(hdrs)))
	b.Grow(1000, 1000*(1024+len(hdrs)))
	allocs := testing.AllocsPerRun(10, func() {
		b.Reset()
		for i := range 1000 {
			if err := b.Add(uint64(1_700_000_000_000_000+i), payload, hdrs); err != nil {
				t.Fatal(err)
			}
		}
		_ = b.Bytes()
	})
	if allocs > 2 {
		t.Fatalf("encoding 1000 messages into a reused batch allocates %.0f times", allocs)
	}
	fresh := testing.AllocsPerRun(5, func() {
		nb := NewBatch(0)
		nb.Grow(1000, 1000*(1024+len(hdrs)))
		for i := range 1000 {
			_ = nb.Add(uint64(1_700_000_000_000_000+i), payload, hdrs)
		}
		_ = nb.Bytes()
	})
	// A handful of buffers whatever the message count (one per message would be ≥ 1000).
	if fresh > 8 {
		t.Fatalf("encoding 1000 messages into a new pre-sized batch allocates %.0f times", fresh)
	}
}
