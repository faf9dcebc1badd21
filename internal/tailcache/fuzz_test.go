package tailcache

import (
	"encoding/binary"
	"testing"
)

// FuzzPut feeds Put arbitrary bytes: it must refuse what it cannot place, never panic, and
// whatever it keeps must be read back as whole batches covering consecutive offsets.
func FuzzPut(f *testing.F) {
	good := producerBatch(f, 3, 8, -1, -1)
	f.Add(good)
	f.Add(append(append([]byte(nil), good...), good...))
	f.Add(good[:headerSize])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := New(1 << 20)
		if err := c.Put(k0, 0, 10, data, 5); err != nil {
			if s := c.Stats(); s.Batches != 0 {
				t.Fatalf("refused input left %d batches", s.Batches)
			}
			return
		}
		views := read(c, k0, 10, 1<<40, 1<<30, nil)
		next, total := uint64(10), 0
		for _, v := range views {
			if base := binary.BigEndian.Uint64(v[offBaseOffset:]); base != next {
				t.Fatalf("batch at %d, want %d", base, next)
			}
			next += uint64(binary.BigEndian.Uint32(v[offNumRecords:]))
			total += len(v)
		}
		if total != len(data) {
			t.Fatalf("read back %d bytes of %d", total, len(data))
		}
	})
}
