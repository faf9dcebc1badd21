package dataplane

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"

	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// FuzzProduceConvert feeds arbitrary bytes as the records of a Produce partition to the
// conversion into an Iggy batch: it must refuse or convert, never panic, stay within the
// decompression budget, and a converted partition holds exactly the records its batches
// declare.
func FuzzProduceConvert(f *testing.F) {
	values := [][]byte{[]byte("a"), nil, {}, []byte("value")}
	f.Add(int16(9), testutil.ProduceBatch(f, 0, values, nil))
	f.Add(int16(9), testutil.ProduceBatch(f, 1, values, testutil.GzipBody))
	f.Add(int16(9), testutil.ProduceBatch(f, 4, values, testutil.ZstdBody))
	f.Add(int16(6), testutil.ProduceBatch(f, 4, values, testutil.ZstdBody))
	f.Add(int16(9), append(testutil.ProduceBatch(f, 0, values, nil), testutil.ProduceBatch(f, 0x10, values, nil)...))
	f.Add(int16(9), testutil.FrameBatch(4, 0, 1, testutil.ZstdRLEBomb(64)))
	const budget = 1 << 20
	f.Fuzz(func(t *testing.T, version int16, records []byte) {
		var c converter
		b := kbatch.NewBudget(budget)
		batch, _, err := c.convert(version, records, b, true)
		if err != nil {
			if batch != nil {
				t.Fatal("a refused partition returned a batch")
			}
			return
		}
		defer putBatch(batch)
		declared := 0
		for rest := records; len(rest) > 0; {
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(rest); err != nil {
				t.Fatalf("converted records kmsg cannot read: %v", err)
			}
			declared += int(rb.NumRecords)
			rest = rest[12+int(rb.Length):]
		}
		if batch.Len() != declared {
			t.Fatalf("Iggy batch of %d messages from batches declaring %d records", batch.Len(), declared)
		}
		if b.Remaining() < 0 || b.Remaining() > budget {
			t.Fatalf("budget left %d", b.Remaining())
		}
	})
}
