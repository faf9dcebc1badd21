package offsets

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

// FuzzDecodeRecord checks that arbitrary bytes never crash the decoder and that whatever it
// accepts re-encodes to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range sampleRecords() {
		f.Add(r.encode(nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeRecord(data)
		if err != nil {
			return
		}
		again := r.encode(nil)
		if !reflect.DeepEqual(again, data) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", data, again)
		}
	})
}

// FuzzStoreReplay runs an arbitrary sequence of store operations (decoded from the input)
// with frequent, small checkpoints and checks that a restart, with or without a clean
// shutdown, rebuilds exactly the live state, which must also equal a full replay.
func FuzzStoreReplay(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, false)
	f.Add([]byte("commit, delete, generation, checkpoint and restart"), true)
	f.Fuzz(func(t *testing.T, script []byte, clean bool) {
		mem := iggylog.NewMem(2)
		small := func(c *Config) { c.CheckpointEvery = 3; c.MaxRecordBytes = 64 << 10 }
		s := openStore(t, mem, small)
		ctx := t.Context()
		for len(script) >= 3 {
			op, a, b := script[0], script[1], script[2]
			script = script[3:]
			group := fmt.Sprintf("g%d", a%5)
			topic := fmt.Sprintf("t%d", b%3)
			part := int32(b % 4)
			switch op % 6 {
			case 0, 1:
				mustCommit(t, s, group, commit(topic, part, int64(a)-1, int32(b%3)-1, string(script[:min(len(script), int(b%8))])))
			case 2:
				if err := s.DeleteOffsets(ctx, group, []TopicPartitions{{Topic: topic, Partitions: []int32{part}}}); err != nil {
					t.Fatal(err)
				}
			case 3:
				if _, err := s.DeleteGroup(ctx, group); err != nil {
					t.Fatal(err)
				}
			case 4:
				if err := s.RecordGeneration(ctx, group, int32(b), "consumer", int(a%2)); err != nil {
					t.Fatal(err)
				}
			case 5:
				s = openStore(t, mem, small) // a crash and restart mid-sequence
			}
		}
		live := snapshotAll(s)
		if clean {
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(live, snapshotAll(openStore(t, mem, small))) {
			t.Fatal("state after restart differs from the live state")
		}
		if !reflect.DeepEqual(live, replayAll(t, mem)) {
			t.Fatal("live state differs from a full replay")
		}
	})
}
