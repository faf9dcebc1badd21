package mapping

import (
	"encoding/hex"
	"errors"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
	"strings"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// unhex decodes hex written with spaces and newlines for readability.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	out, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGoldenNative pins the exact bytes of a native message.
func TestGoldenNative(t *testing.T) {
	msgs := produce(t, []trec{{ts: 1000, key: b("k"), value: b("val"), headers: []kbatch.RecordHeader{h("h", b("x"))}}})
	m := msgs[0]
	if m.OriginTimestamp != 1_000_000 || string(m.Payload) != "val" {
		t.Fatalf("origin %d payload %q", m.OriginTimestamp, m.Payload)
	}
	want := unhex(t, stripComments(`
		02 07000000 6b61666b612e76           01 01000000 01   -- String "kafka.v", Raw 01
		02 09000000 6b61666b612e6b6579       01 01000000 6b   -- String "kafka.key", Raw "k"
		02 09000000 6b61666b612e682e68       01 01000000 78   -- String "kafka.h.h", Raw "x"`))
	if string(m.Headers) != string(want) {
		t.Fatalf("headers\n got %x\nwant %x", m.Headers, want)
	}
}

// TestGoldenPlaceholders pins null and empty values and the epoch timestamp.
func TestGoldenPlaceholders(t *testing.T) {
	msgs := produce(t, []trec{{ts: 0}, {ts: 0, value: []byte{}}})
	want := []string{`
		02 07000000 6b61666b612e76          01 01000000 01
		02 08000000 6b61666b612e7473        07 08000000 0000000000000000  -- "kafka.ts", Int64 0
		02 0b000000 6b61666b612e76616c7565  01 04000000 6e756c6c          -- "kafka.value", "null"`, `
		02 07000000 6b61666b612e76          01 01000000 01
		02 08000000 6b61666b612e7473        07 08000000 0000000000000000
		02 0b000000 6b61666b612e76616c7565  01 05000000 656d707479        -- "kafka.value", "empty"`}
	for i, m := range msgs {
		if m.OriginTimestamp != 0 || string(m.Payload) != "\x00" {
			t.Fatalf("message %d: origin %d payload %x", i, m.OriginTimestamp, m.Payload)
		}
		if w := unhex(t, stripComments(want[i])); string(m.Headers) != string(w) {
			t.Fatalf("message %d headers\n got %x\nwant %x", i, m.Headers, w)
		}
	}
}

// TestGoldenEnvelope pins the envelope payload layout byte by byte.
func TestGoldenEnvelope(t *testing.T) {
	msgs := produce(t, []trec{{ts: 2000, key: []byte{}, value: nil,
		headers: []kbatch.RecordHeader{h("a", nil), h("a", b("1")), h("b", []byte{})}}})
	m := msgs[0]
	wantPayload := unhex(t, stripComments(`
		01                       -- flags: key present, value absent
		00000000                 -- key_len 0 (empty key)
		00000000                 -- value_len 0 (null value)
		03000000                 -- header_count 3
		01000000 61 00 00000000  -- "a", null
		01000000 61 01 01000000 31 -- "a", "1"
		01000000 62 01 00000000  -- "b", empty`))
	if string(m.Payload) != string(wantPayload) {
		t.Fatalf("payload\n got %x\nwant %x", m.Payload, wantPayload)
	}
	wantHeaders := unhex(t, stripComments(`
		02 07000000 6b61666b612e76                 01 01000000 01 -- kafka.v 1
		02 0e000000 6b61666b612e656e76656c6f7065   01 01000000 01 -- kafka.envelope 1`))
	if string(m.Headers) != string(wantHeaders) || m.OriginTimestamp != 2_000_000 {
		t.Fatalf("headers\n got %x\nwant %x", m.Headers, wantHeaders)
	}
}

func stripComments(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// TestNativeMessages: messages without kafka.v come from Iggy clients.
func TestNativeMessages(t *testing.T) {
	hdrs := block(
		KindString, "content-type", KindString, "json",
		KindRaw, "kafka.value", KindRaw, "null", // a kafka.* name means nothing without kafka.v
		KindString, "kafka.key", KindRaw, "not a key",
		KindString, "n", 11, "\x01\x00\x00\x00",
	)
	_, got := fetch(t, []Stored{
		{Offset: 3, Timestamp: serverTs, OriginTimestamp: 1_234_567_891, Payload: b("payload"), Headers: hdrs},
		{Offset: 4, Timestamp: serverTs, OriginTimestamp: 0, Payload: b("no origin")},
	})
	checkSame(t, got, []trec{
		{ts: 1_234_567, value: b("payload"), headers: []kbatch.RecordHeader{
			h("content-type", b("json")), h("kafka.value", b("null")), h("kafka.key", b("not a key")), h("n", b("\x01\x00\x00\x00"))}},
		{ts: serverTs / 1000, value: b("no origin")},
	})
}

// TestUpstreamWrittenMessages reads messages as the upstream gateway writes them: headers in
// its sorted-map order, "epoch" in kafka.ts from its earlier versions.
func TestUpstreamWrittenMessages(t *testing.T) {
	_, got := fetch(t, []Stored{
		{Offset: 0, OriginTimestamp: 5_000_000, Payload: b("v"), Headers: block(
			KindString, "kafka.h.b", KindRaw, "2",
			KindString, "kafka.h.a", KindRaw, "1",
			KindString, "kafka.key", KindRaw, "k",
			KindString, "kafka.v", KindRaw, "\x01")},
		{Offset: 1, Timestamp: serverTs, Payload: b("\x00"), Headers: block(
			KindString, "kafka.ts", KindString, "epoch",
			KindString, "kafka.v", KindRaw, "\x01",
			KindString, "kafka.value", KindRaw, "empty")},
		{Offset: 2, Timestamp: serverTs, OriginTimestamp: 7_000_000, Payload: b("\x00"), Headers: block(
			KindString, "kafka.future", KindRaw, "ignored", // unknown kafka.* markers are ignored
			KindString, "kafka.v", KindRaw, "\x01",
			KindString, "kafka.ts", KindInt64, "\xff\xff\xff\xff\xff\xff\xff\xff", // -1: server time
			KindString, "kafka.value", KindRaw, "null")},
	})
	checkSame(t, got, []trec{
		{ts: 5000, key: b("k"), value: b("v"), headers: []kbatch.RecordHeader{h("b", b("2")), h("a", b("1"))}},
		{ts: 0, value: []byte{}},
		{ts: serverTs / 1000},
	})
}

func TestMessageErrors(t *testing.T) {
	v1 := block(KindString, "kafka.v", KindRaw, "\x01")
	env := func(payload string) Stored {
		return Stored{Offset: 9, Payload: []byte(payload), Headers: append(append([]byte{}, v1...),
			block(KindString, "kafka.envelope", KindRaw, "\x01")...)}
	}
	goodEnvelope := "\x01\x01\x00\x00\x00k\x00\x00\x00\x00\x00\x00\x00\x00"
	for _, tc := range []struct {
		name string
		m    Stored
		want error
	}{
		{"unknown kafka.v", Stored{Payload: b("v"), Headers: block(KindString, "kafka.v", KindRaw, "\x02")}, ErrUnsupportedVersion},
		{"truncated block", Stored{Payload: b("v"), Headers: v1[:len(v1)-1]}, ErrCorrupt},
		{"kind 0", Stored{Payload: b("v"), Headers: block(0, "a", KindRaw, "b")}, ErrCorrupt},
		{"value kind 16", Stored{Payload: b("v"), Headers: block(KindString, "a", 16, "b")}, ErrCorrupt},
		{"empty key", Stored{Payload: b("v"), Headers: block(KindString, "", KindRaw, "b")}, ErrCorrupt},
		{"empty value", Stored{Payload: b("v"), Headers: block(KindString, "a", KindRaw, "")}, ErrCorrupt},
		{"key of 256", Stored{Payload: b("v"), Headers: block(KindString, strings.Repeat("k", 256), KindRaw, "b")}, ErrCorrupt},
		{"bad kafka.value", Stored{Payload: b("v"), Headers: append(block(KindString, "kafka.value", KindRaw, "bogus"), v1...)}, ErrCorrupt},
		{"bad kafka.ts", Stored{Payload: b("v"), Headers: append(block(KindString, "kafka.ts", KindRaw, "abc"), v1...)}, ErrCorrupt},
		{"repeated kafka.key", Stored{Payload: b("v"), Headers: append(block(KindString, "kafka.key", KindRaw, "1", KindString, "kafka.key", KindRaw, "2"), v1...)}, ErrCorrupt},
		{"envelope version 2", Stored{Payload: b(goodEnvelope), Headers: append(block(KindString, "kafka.envelope", KindRaw, "\x02"), v1...)}, ErrUnsupportedVersion},
		{"envelope trailing bytes", env(goodEnvelope + "x"), ErrCorrupt},
		{"envelope truncated", env(goodEnvelope[:len(goodEnvelope)-1]), ErrCorrupt},
		{"envelope bad flags", env("\x05" + goodEnvelope[1:]), ErrCorrupt},
		{"envelope absent key with length", env("\x00" + goodEnvelope[1:]), ErrCorrupt},
		{"envelope header count too high", env(goodEnvelope[:len(goodEnvelope)-4] + "\xff\xff\xff\xff"), ErrCorrupt},
		{"envelope bad presence byte", env(goodEnvelope[:len(goodEnvelope)-4] + "\x01\x00\x00\x00\x01\x00\x00\x00a\x02\x00\x00\x00\x00"), ErrCorrupt},
		{"envelope field past end", env("\x01\xff\x00\x00\x00k"), ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e BatchEncoder
			e.Begin(nil, -1)
			first := Stored{Offset: 1, OriginTimestamp: 1000, Payload: b("ok")}
			if _, err := e.Add(&first, 0); err != nil {
				t.Fatal(err)
			}
			tc.m.Offset = 9
			ok, err := e.Add(&tc.m, 0)
			var me *MessageError
			if ok || !errors.Is(err, tc.want) || !errors.As(err, &me) || me.Offset != 9 {
				t.Fatalf("got %v %v, want a MessageError at offset 9 wrapping %v", ok, err, tc.want)
			}
			// The batch holds exactly the record added before the failure.
			_, got := decodeKafka(t, e.Finish())
			checkSame(t, got, []trec{{ts: 1, value: b("ok")}})
		})
	}
	// The well-formed envelope used above decodes.
	_, got := fetch(t, []Stored{env(goodEnvelope)})
	checkSame(t, got, []trec{{key: b("k"), value: nil}})
}

func TestBatchEncoderMaxSize(t *testing.T) {
	msgs := []Stored{
		{Offset: 10, OriginTimestamp: 1000, Payload: make([]byte, 500)},
		{Offset: 11, OriginTimestamp: 1000, Payload: make([]byte, 500)},
	}
	var e BatchEncoder
	e.Begin(nil, 3)
	if ok, err := e.Add(&msgs[0], 100); !ok || err != nil {
		t.Fatalf("first record refused: %v %v", ok, err)
	}
	if ok, err := e.Add(&msgs[1], e.Size()+100); ok || err != nil {
		t.Fatalf("record past the limit added: %v %v", ok, err)
	}
	if ok, err := e.Add(&msgs[1], e.Size()+600); !ok || err != nil {
		t.Fatalf("record within the limit refused: %v %v", ok, err)
	}
	hdr, got := decodeKafka(t, e.Finish())
	if len(got) != 2 || hdr.PartitionLeaderEpoch != 3 || hdr.BaseOffset != 10 {
		t.Fatalf("%d records, header %+v", len(got), hdr)
	}
}

func TestToRecordReusesScratch(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	m := Stored{Payload: b("v"), Headers: block(KindString, "a", KindRaw, "1", KindString, "b", KindRaw, "2")}
	var scratch []kbatch.RecordHeader
	allocs := testing.AllocsPerRun(100, func() {
		rec, err := ToRecord(&m, scratch)
		if err != nil || len(rec.Headers) != 2 {
			t.Fatal(err)
		}
		scratch = rec.Headers
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per ToRecord", allocs)
	}
}

// MessageHeadersMin is what Append adds for the plainest record (no key, no headers, a
// timestamp that needs no kafka.ts): Iggy batches are sized with it.
func TestMessageHeadersMin(t *testing.T) {
	msgs := produce(t, []trec{{ts: ts0, value: b("v")}})
	if got := len(msgs[0].Headers); got != MessageHeadersMin {
		t.Fatalf("plain record's headers take %d bytes, MessageHeadersMin is %d", got, MessageHeadersMin)
	}
}
