package offsets

import (
	"bytes"
	"log/slog"
	"reflect"
	"testing"
)

func sampleEpochRecords() []EpochRecord {
	return []EpochRecord{
		{Stream: "kafka", Topic: "orders", Partition: 3, Epoch: 1, Start: 500, TruncatedFrom: 700, Time: 1700000000000},
		{Stream: "s", Topic: "t", Partition: 0, Epoch: 2, Start: 0, TruncatedFrom: 1, Time: 0},
	}
}

// TestEpochLog: appended records come back once each, in order; an unreadable record is
// skipped (with an error log) and the ones after it are still read.
func TestEpochLog(t *testing.T) {
	mem := NewMemLog(EpochPartitions)
	var logged bytes.Buffer
	el := NewEpochLog(mem, slog.New(slog.NewTextHandler(&logged, nil)))
	ctx := t.Context()
	recs := sampleEpochRecords()
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
	fresh, err := NewEpochLog(mem, slog.New(slog.DiscardHandler)).ReadNew(ctx)
	if err != nil || !reflect.DeepEqual(fresh, recs) {
		t.Fatalf("fresh reader: %+v, %v", fresh, err)
	}
}

func TestDecodeEpochRecordRefuses(t *testing.T) {
	good := sampleEpochRecords()[0].encode(nil)
	zeroEpoch := EpochRecord{Stream: "s", Topic: "t", Epoch: 0}
	for name, data := range map[string][]byte{
		"empty":      nil,
		"bad crc":    append(bytes.Clone(good[:len(good)-1]), good[len(good)-1]^1),
		"truncated":  appendCRC(bytes.Clone(good[:len(good)-10]), 0),
		"epoch zero": zeroEpoch.encode(nil),
	} {
		if _, err := DecodeEpochRecord(data); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzDecodeEpochRecord: arbitrary bytes never crash the decoder, and what it accepts
// re-encodes to the same bytes.
func FuzzDecodeEpochRecord(f *testing.F) {
	for _, r := range sampleEpochRecords() {
		f.Add(r.encode(nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeEpochRecord(data)
		if err != nil {
			return
		}
		if again := r.encode(nil); !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", data, again)
		}
	})
}
