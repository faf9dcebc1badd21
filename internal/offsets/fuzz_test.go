package offsets

import (
	"reflect"
	"testing"
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
