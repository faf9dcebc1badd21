package offsets

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

// corruptLog returns a one-partition log with a checkpoint in the middle: 30 records, a
// checkpoint, then 7 records. It returns the log and the checkpoint's offset.
func corruptLog(t *testing.T) (*iggylog.Mem, uint64) {
	mem := iggylog.NewMem(1)
	s := openStore(t, mem, func(c *Config) { c.CheckpointEvery = 30 })
	for i := range 37 {
		mustCommit(t, s, fmt.Sprintf("g%d", i%4), commit("t", int32(i), int64(i), -1, ""))
	}
	return mem, s.parts[0].checkpoint
}

func flip(mem *iggylog.Mem, off uint64) { mem.Records(0)[off][5] ^= 0xff }

func TestCorruptRecordStopsLoad(t *testing.T) {
	mem, cp := corruptLog(t)
	end := uint64(len(mem.Records(0)))
	tests := []struct {
		name string
		off  uint64
	}{
		{"tail record", end - 3},
		{"last record", end - 1},
		{"record before the checkpoint", cp - 1}, // read only by a recovery from the checkpoint
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := copyLog(mem)
			flip(mem, tt.off)
			if tt.off == cp-1 {
				flip(mem, cp) // a damaged checkpoint (recovered from) whose replay meets the corrupt record
			}
			s, err := New(testConfig(mem))
			if err != nil {
				t.Fatal(err)
			}
			err = s.Load(t.Context())
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("partition 0 offset %d", tt.off)) {
				t.Fatalf("Load error %v, want a corrupt-record error naming partition 0 offset %d", err, tt.off)
			}
			if _, ferr := s.Fetch("g0", nil); ferr == nil {
				t.Fatal("a store that failed to load answers fetches")
			}
		})
	}
}

func TestSkipCorruptLoadsTheRest(t *testing.T) {
	mem, cp := corruptLog(t)
	end := uint64(len(mem.Records(0)))
	skip := func(c *Config) { c.Recovery = RecoverSkip }
	for _, off := range []uint64{end - 3, cp, end - 1, 0} {
		t.Run(fmt.Sprint("offset ", off), func(t *testing.T) {
			original := append([]byte(nil), mem.Records(0)[off]...)
			lost, err := DecodeRecord(original)
			if err != nil {
				t.Fatal(err)
			}
			flip(mem, off)
			defer func() { mem.Records(0)[off] = original }()
			// The expected state: every intact non-checkpoint record, in order.
			want := make(view)
			for o, data := range mem.Records(0) {
				if r, err := DecodeRecord(data); err == nil && r.Kind != KindCheckpoint && uint64(o) != off {
					want.apply(r)
				}
			}
			// A copy: closing the store appends a checkpoint.
			got := snapshotAll(openStore(t, withRecord(mem, off, mem.Records(0)[off]), skip))[0]
			if lost.Kind == KindCheckpoint || off < cp {
				// A lost checkpoint costs nothing (full replay); a lost record before the
				// checkpoint is covered by it.
				if !reflect.DeepEqual(got, replayAll(t, withRecord(mem, off, original))[0]) {
					t.Fatal("state differs from the intact log")
				}
				return
			}
			if !reflect.DeepEqual(got, want.snapshot()) {
				t.Fatal("state differs from the log without the corrupt record")
			}
		})
	}
}

// withRecord returns a copy of mem with the record at off replaced.
func withRecord(mem *iggylog.Mem, off uint64, data []byte) *iggylog.Mem {
	c := mem.Clone()
	c.Records(0)[off] = data
	return c
}

func TestRecordFromNewerGatewayStopsLoad(t *testing.T) {
	mem, _ := corruptLog(t)
	future := appendCRC(append([]byte{3, 1}, make([]byte, 24)...), 0)
	if _, err := mem.Append(t.Context(), 0, [][]byte{future}); err != nil {
		t.Fatal(err)
	}
	s, _ := New(testConfig(mem))
	if err := s.Load(t.Context()); err == nil || !strings.Contains(err.Error(), "unknown record version 3") {
		t.Fatalf("Load error %v", err)
	}
}
