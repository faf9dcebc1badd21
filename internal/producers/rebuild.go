package producers

import (
	"fmt"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/mapping"
)

// Rebuild restores the partition's producer state from a tail of its messages, oldest first,
// as polled from Iggy: every message that starts an idempotent batch (its producer headers,
// docs/STORAGE-FORMAT.md §2.4) is restored with its offset as the batch's base offset and its
// append time as the batch's write time (see Restore). Call it before the partition's first
// idempotent write after a start, so that a retry of a batch written before the restart is
// recognised. Messages whose producer headers are corrupt are skipped and reported in the
// error; the rest are restored all the same.
func (p *Partition) Rebuild(tail []iggy.PolledMessage) error {
	var skipped int
	var first error
	for i := range tail {
		prod, ok, err := producerOf(&tail[i])
		if err != nil {
			if skipped++; first == nil {
				first = err
			}
			continue
		}
		if ok {
			p.Restore(batchOf(prod), int64(tail[i].Offset), time.UnixMicro(int64(tail[i].Timestamp)))
		}
	}
	if first != nil {
		return fmt.Errorf("producers: %d messages with corrupt producer headers skipped, the first: %w", skipped, first)
	}
	return nil
}

// FindBatch looks for the first message of batch b in messages polled from the partition and
// returns its offset, the batch's base offset. The Produce handler uses it to find out whether
// a write with an uncertain outcome landed (docs/IDEMPOTENCE.md).
func FindBatch(polled []iggy.PolledMessage, b Batch) (base int64, found bool) {
	for i := range polled {
		if prod, ok, err := producerOf(&polled[i]); err == nil && ok && batchOf(prod) == b {
			return int64(polled[i].Offset), true
		}
	}
	return 0, false
}

func producerOf(m *iggy.PolledMessage) (mapping.Producer, bool, error) {
	return mapping.ProducerOfMessage(&mapping.Stored{Offset: m.Offset, Headers: m.Headers})
}

func batchOf(p mapping.Producer) Batch {
	return Batch{ProducerID: p.ID, Epoch: p.Epoch, FirstSeq: p.BaseSequence, Records: p.Records}
}
