package memserver

import (
	"sort"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// partition is one partition's message log and consumer offsets. Messages are kept as the
// stamped canonical batches they arrived in, so a poll answers with the stored bytes (whole
// batches, or a re-headed run of frames), exactly like the real server.
type partition struct {
	id        uint32
	createdAt uint64
	batches   []storedBatch
	next      uint64 // offset of the next message; also the number of messages appended
	sizeBytes uint64
	written   persisted // reached the segment file (survives a process crash)
	synced    persisted // fsynced (survives a machine crash)

	consumerOffsets map[wire.Identifier]uint64 // consumer kind 1, by consumer id
	groupOffsets    map[uint32]uint64          // consumer kind 2, by group id
}

// storedBatch is an appended batch record (stamped header and frames). Its bytes are never
// modified after the append, so polls may read them without the state lock.
type storedBatch struct {
	data          []byte
	baseOffset    uint64
	baseTimestamp uint64
	count         uint32
}

// span is a run of frames of one stored batch selected by a poll.
type span struct {
	batch       []byte
	first, n    int
	wholeRecord bool
}

func newPartition(id uint32, now uint64) *partition {
	return &partition{
		id:              id,
		createdAt:       now,
		consumerOffsets: map[wire.Identifier]uint64{},
		groupOffsets:    map[uint32]uint64{},
	}
}

// currentOffset is the offset of the last message, 0 for an empty partition.
func (p *partition) currentOffset() uint64 {
	if p.next == 0 {
		return 0
	}
	return p.next - 1
}

func (p *partition) view() wire.Partition {
	return wire.Partition{
		ID:            p.id,
		CreatedAt:     p.createdAt,
		SegmentsCount: 1, // the real server reports at least one segment
		CurrentOffset: p.currentOffset(),
		SizeBytes:     p.sizeBytes,
		MessagesCount: p.next,
	}
}

func (p *partition) purge() {
	p.batches = nil
	p.next = 0
	p.sizeBytes = 0
	p.written, p.synced = persisted{}, persisted{}
	clear(p.consumerOffsets)
	clear(p.groupOffsets)
}

// appendBatch stamps a verified batch record of count frames (owned by the partition from now
// on) with the partition id, its base offset and the append time, stores it and returns the
// base offset.
func (p *partition) appendBatch(data []byte, count uint32, now uint64) uint64 {
	base := p.next
	wire.StampBatch(data, uint64(p.id), base, now)
	p.batches = append(p.batches, storedBatch{data: data, baseOffset: base, baseTimestamp: now, count: count})
	p.next += uint64(count)
	p.sizeBytes += uint64(len(data))
	return base
}

// readFrom selects up to count messages starting at offset start (or, when byTime is set, the
// messages appended at or after the timestamp start, in µs). It reports how many it selected
// and the offset of the last one.
func (p *partition) readFrom(start uint64, byTime bool, count uint32) (spans []span, n uint32, last uint64) {
	var i int
	if byTime {
		i = sort.Search(len(p.batches), func(i int) bool { return p.batches[i].baseTimestamp >= start })
	} else {
		i = sort.Search(len(p.batches), func(i int) bool {
			b := &p.batches[i]
			return b.baseOffset+uint64(b.count) > start
		})
	}
	for ; i < len(p.batches) && n < count; i++ {
		b := &p.batches[i]
		first := 0
		if !byTime && start > b.baseOffset {
			first = int(start - b.baseOffset)
		}
		take := min(int(b.count)-first, int(count-n))
		spans = append(spans, span{batch: b.data, first: first, n: take, wholeRecord: first == 0 && take == int(b.count)})
		n += uint32(take)
		last = b.baseOffset + uint64(first+take-1)
	}
	return spans, n, last
}

// appendSpans appends the batch records of spans to dst: whole stored batches as they are,
// partial ones re-headed by the codec.
func appendSpans(dst []byte, spans []span) ([]byte, error) {
	for _, s := range spans {
		if s.wholeRecord {
			dst = append(dst, s.batch...)
			continue
		}
		var err error
		if dst, err = wire.AppendBatchSlice(dst, s.batch, s.first, s.n); err != nil {
			return dst, err
		}
	}
	return dst, nil
}
