package epochlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"log/slog"
	"reflect"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

func sampleRecords() []Record {
	return []Record{
		{Stream: "kafka", Topic: "orders", Partition: 3, Epoch: 1, Start: 500, TruncatedFrom: 700, Time: 1700000000000},
		{Stream: "s", Topic: "t", Partition: 0, Epoch: 2, Start: 0, TruncatedFrom: 1, Time: 0},
	}
}

// TestEpochLog: appended records come back once each, in order; an unreadable record is
// skipped (with an error log) and the ones after it are still read.
func TestEpochLog(t *testing.T) {
	mem := iggylog.NewMem(Partitions)
	var logged bytes.Buffer
	el := New(mem, slog.New(slog.NewTextHandler(&logged, nil)))
	ctx := t.Context()
	recs := sampleRecords()
	if err := el.Append(ctx, recs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Append(ctx, 0, [][]byte{[]byte("not a record")}); err != nil {
		t.Fatal(err)
	}
	if err := el.Append(ctx, recs[1]); err != nil {
		t.Fatal(err)
	}
	got, err := el.ReadNew(ctx)
	if err != nil || !reflect.DeepEqual(got, recs) {
		t.Fatalf("ReadNew: %+v, %v; want %+v", got, err, recs)
	}
	if !bytes.Contains(logged.Bytes(), []byte("unreadable record")) {
		t.Fatalf("the corrupt record was not logged: %s", logged.String())
	}
	if again, err := el.ReadNew(ctx); err != nil || len(again) != 0 {
		t.Fatalf("second ReadNew: %+v, %v; want nothing new", again, err)
	}
	// A second reader (another gateway, or a restart) reads them all.
	fresh, err := New(mem, slog.New(slog.DiscardHandler)).ReadNew(ctx)
	if err != nil || !reflect.DeepEqual(fresh, recs) {
		t.Fatalf("fresh reader: %+v, %v", fresh, err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	good := sampleRecords()[0].encode(nil)
	zeroEpoch := Record{Stream: "s", Topic: "t", Epoch: 0}
	for name, data := range map[string][]byte{
		"empty":      nil,
		"bad crc":    append(bytes.Clone(good[:len(good)-1]), good[len(good)-1]^1),
		"truncated":  withCRC(good[:len(good)-14]),
		"trailing":   withCRC(append(bytes.Clone(good[:len(good)-4]), 0)),
		"version 2":  withCRC(append([]byte{2}, good[1:len(good)-4]...)),
		"epoch zero": zeroEpoch.encode(nil),
	} {
		if _, err := Decode(data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Decode error %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzDecode: arbitrary bytes never crash the decoder, and what it accepts
// re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, r := range sampleRecords() {
		f.Add(r.encode(nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data)
		if err != nil {
			return
		}
		if again := r.encode(nil); !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", data, again)
		}
	})
}

// withCRC returns body followed by its CRC-32C, as encode ends a record.
func withCRC(body []byte) []byte {
	return binary.BigEndian.AppendUint32(bytes.Clone(body), crc32.Checksum(body, castagnoli))
}
