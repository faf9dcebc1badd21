package memserver

import (
	"fmt"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// TruncatePartition drops every message of a partition from offset newEnd on, as a real
// server does when it restarts having lost an unflushed tail: the next message appended gets
// offset newEnd again. Consumer offsets are left as they were (they may now point past the
// end, as on the real server). It is a test hook for truncation handling; open connections
// are not touched (DropConnections simulates the restart itself).
func (s *Server) TruncatePartition(stream, topic string, partition uint32, newEnd uint64) error {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	_, t, oerr := st.resolveTopic(wire.Identifier{Name: stream}, wire.Identifier{Name: topic})
	if oerr != nil {
		return oerr
	}
	p := t.partition(partition)
	if p == nil {
		return fmt.Errorf("memserver: topic %s/%s has no partition %d", stream, topic, partition)
	}
	if newEnd >= p.next {
		return fmt.Errorf("memserver: partition %d of %s/%s ends at %d, nothing to truncate to %d", partition, stream, topic, p.next, newEnd)
	}
	keep := p.batches[:0]
	for _, b := range p.batches {
		switch {
		case b.baseOffset+uint64(b.count) <= newEnd:
			keep = append(keep, b)
			continue
		case b.baseOffset >= newEnd:
		default: // the batch straddles newEnd: keep its head, re-headed by the codec
			n := int(newEnd - b.baseOffset)
			data, err := wire.AppendBatchSlice(nil, b.data, 0, n)
			if err != nil {
				return err
			}
			p.sizeBytes -= uint64(len(b.data) - len(data))
			keep = append(keep, storedBatch{data: data, baseOffset: b.baseOffset, baseTimestamp: b.baseTimestamp, count: uint32(n)})
			continue
		}
		p.sizeBytes -= uint64(len(b.data))
	}
	clear(p.batches[len(keep):])
	p.batches = keep
	p.next = newEnd
	return nil
}
