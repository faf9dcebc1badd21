package mapping

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// fuzzHeaders splits b into headers: [name_len:u16][name][value_len:u16, 0xffff = null][value].
func fuzzHeaders(b []byte) []kbatch.RecordHeader {
	var hs []kbatch.RecordHeader
	for len(b) >= 2 {
		n := int(binary.LittleEndian.Uint16(b))
		b = b[2:]
		if n > len(b) {
			break
		}
		name := b[:n]
		b = b[n:]
		if len(b) < 2 {
			break
		}
		vl := int(binary.LittleEndian.Uint16(b))
		b = b[2:]
		var value []byte
		if vl != 0xffff {
			if vl > len(b) {
				break
			}
			value, b = b[:vl], b[vl:]
		}
		hs = append(hs, kbatch.RecordHeader{Key: name, Value: value})
	}
	return hs
}

func fuzzHeaderBytes(hs ...kbatch.RecordHeader) []byte {
	var out []byte
	for _, h := range hs {
		out = binary.LittleEndian.AppendUint16(out, uint16(len(h.Key)))
		out = append(out, h.Key...)
		if h.Value == nil {
			out = binary.LittleEndian.AppendUint16(out, 0xffff)
			continue
		}
		out = binary.LittleEndian.AppendUint16(out, uint16(len(h.Value)))
		out = append(out, h.Value...)
	}
	return out
}

// FuzzRecordToMessageRoundTrip: any Kafka record maps to a message Iggy accepts, and that
// message reads back as the same record.
func FuzzRecordToMessageRoundTrip(f *testing.F) {
	f.Add(int64(ts0), []byte("k"), false, []byte("v"), false, fuzzHeaderBytes(h("a", b("1")), h("b", b("2"))))
	f.Add(int64(0), []byte{}, false, []byte{}, true, fuzzHeaderBytes(h("a", nil), h("a", []byte{})))
	f.Add(int64(-1), []byte(nil), true, bytes.Repeat([]byte{1}, 300), false, fuzzHeaderBytes(h(string(bytes.Repeat([]byte{'n'}, 250)), b("x"))))
	f.Add(int64(-9), bytes.Repeat([]byte{'k'}, 256), false, []byte{}, false, []byte(nil))
	f.Fuzz(func(t *testing.T, ts int64, key []byte, keyNull bool, value []byte, valueNull bool, hdrs []byte) {
		rec := trec{ts: ts, key: key, value: value, headers: fuzzHeaders(hdrs)}
		if keyNull {
			rec.key = nil
		} else if rec.key == nil {
			rec.key = []byte{}
		}
		if valueNull {
			rec.value = nil
		} else if rec.value == nil {
			rec.value = []byte{}
		}
		for i := range rec.headers {
			if rec.headers[i].Key == nil {
				rec.headers[i].Key = []byte{}
			}
		}
		msgs := produce(t, []trec{rec})
		_, got := fetch(t, stored(msgs, 0, serverTs))
		if rec.ts == noTimestamp {
			rec.ts = serverTs / 1000
		}
		checkSame(t, got, []trec{rec})
	})
}

// FuzzMessageToRecord: any stored message either maps to a record or fails with a
// MessageError, never panics, and a mapped record survives the Kafka batch encoding; its
// producer headers read back or fail as corrupt.
func FuzzMessageToRecord(f *testing.F) {
	for _, r := range []trec{
		{ts: ts0, key: b("k"), value: b("v"), headers: []kbatch.RecordHeader{h("a", b("1"))}},
		{ts: 0, key: []byte{}, headers: []kbatch.RecordHeader{h("d", b("1")), h("d", nil)}},
		{ts: ts0},
	} {
		m := produce(f, []trec{r})[0]
		f.Add(m.OriginTimestamp, uint64(serverTs), m.Payload, m.Headers)
		m = produceAs(f, []trec{r}, &Producer{ID: 1, Records: 1})[0]
		f.Add(m.OriginTimestamp, uint64(serverTs), m.Payload, m.Headers)
	}
	f.Add(uint64(0), uint64(serverTs), []byte("native"), block(KindString, "content-type", KindString, "json"))
	f.Fuzz(func(t *testing.T, origin, server uint64, payload, headers []byte) {
		m := Stored{Offset: 5, Timestamp: server, OriginTimestamp: origin, Payload: payload, Headers: headers}
		if _, _, err := ProducerOfMessage(&m); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("producer headers: %v is not ErrCorrupt", err)
		}
		rec, err := ToRecord(&m, nil)
		if err != nil {
			var me *MessageError
			if !errors.As(err, &me) || me.Offset != 5 {
				t.Fatalf("error %v is not a MessageError at offset 5", err)
			}
			return
		}
		want := trec{ts: rec.Timestamp, key: rec.Key, value: rec.Value, headers: rec.Headers}
		_, got := fetch(t, []Stored{m})
		checkSame(t, got, []trec{want})
	})
}
