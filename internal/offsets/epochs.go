package offsets

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math"
	"sync"
)

// The leader-epoch log: where the gateway records that a partition's leader epoch was bumped
// after its log was found truncated (docs/DATA-PATH.md, "Truncation and leader epochs"). It
// is one Iggy topic with one partition in the reserved stream, next to the coordinator log.
// Truncations are rare, so the log is small and read whole at startup; it is never compacted.
const (
	EpochTopic      = "__leader_epochs"
	EpochPartitions = 1
)

// EpochRecord says that leader epoch Epoch of an Iggy partition starts at offset Start,
// because the partition's log end was found at Start after having been at TruncatedFrom.
type EpochRecord struct {
	Stream, Topic string
	Partition     uint32
	Epoch         int32
	Start         uint64
	TruncatedFrom uint64
	Time          int64 // ms since the Unix epoch
}

// Epoch record encoding, version 1. Integers are big-endian; a string is a u16 length and
// its bytes.
//
//	record = version:u8 stream:str topic:str partition:u32 epoch:i32 start:u64 truncated_from:u64 time:i64 crc:u32
//	crc    = CRC-32C (Castagnoli) of every byte before it
const epochRecordVersion = 1

// encode appends the encoding of r to dst. Names longer than math.MaxUint16 bytes cannot
// be Iggy names, so they never reach here.
func (r *EpochRecord) encode(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, epochRecordVersion)
	dst = appendString(dst, r.Stream)
	dst = appendString(dst, r.Topic)
	dst = binary.BigEndian.AppendUint32(dst, r.Partition)
	dst = binary.BigEndian.AppendUint32(dst, uint32(r.Epoch))
	dst = binary.BigEndian.AppendUint64(dst, r.Start)
	dst = binary.BigEndian.AppendUint64(dst, r.TruncatedFrom)
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.Time))
	return appendCRC(dst, start)
}

// DecodeEpochRecord decodes one leader-epoch record.
func DecodeEpochRecord(b []byte) (EpochRecord, error) {
	if len(b) < 1+crcSize {
		return EpochRecord{}, fmt.Errorf("%w: %d bytes is shorter than an epoch record", ErrCorrupt, len(b))
	}
	body, sum := b[:len(b)-crcSize], binary.BigEndian.Uint32(b[len(b)-crcSize:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return EpochRecord{}, fmt.Errorf("%w: CRC-32C %08x, epoch record says %08x", ErrCorrupt, got, sum)
	}
	if body[0] != epochRecordVersion {
		return EpochRecord{}, fmt.Errorf("%w: epoch record version %d", ErrCorrupt, body[0])
	}
	rd := &reader{b: body[1:]}
	r := EpochRecord{Stream: rd.str(), Topic: rd.str(), Partition: rd.u32(), Epoch: int32(rd.u32()),
		Start: rd.u64(), TruncatedFrom: rd.u64(), Time: int64(rd.u64())}
	if rd.err == nil && len(rd.b) != 0 {
		rd.fail("%d trailing bytes", len(rd.b))
	}
	if rd.err != nil {
		return EpochRecord{}, rd.err
	}
	if r.Epoch <= 0 || r.Start > math.MaxInt64 || r.TruncatedFrom > math.MaxInt64 {
		return EpochRecord{}, fmt.Errorf("%w: epoch record with epoch %d, start %d, truncated from %d", ErrCorrupt, r.Epoch, r.Start, r.TruncatedFrom)
	}
	return r, nil
}

// EpochLog reads and appends leader-epoch records. It is safe for concurrent use.
type EpochLog struct {
	log Log
	lg  *slog.Logger

	mu   sync.Mutex // serializes reads, so each record is returned once
	next uint64     // offset of the first record not read yet
}

// NewEpochLog returns the leader-epoch log over l (one partition; an IggyLog over
// DefaultStream and EpochTopic in production). Corrupt records are logged on lg and skipped:
// a lost epoch bump is not worth a gateway that cannot start.
func NewEpochLog(l Log, lg *slog.Logger) *EpochLog {
	return &EpochLog{log: l, lg: lg}
}

// Ensure creates the log if it does not exist.
func (e *EpochLog) Ensure(ctx context.Context) error { return e.log.Ensure(ctx) }

// ReadNew returns the records appended since the previous call (all of them on the first),
// in log order.
func (e *EpochLog) ReadNew(ctx context.Context) ([]EpochRecord, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []EpochRecord
	for {
		entries, err := e.log.ReadFrom(ctx, 0, e.next, 256)
		if err != nil {
			return out, fmt.Errorf("reading the leader-epoch log at %d: %w", e.next, err)
		}
		if len(entries) == 0 {
			return out, nil
		}
		for _, en := range entries {
			r, err := DecodeEpochRecord(en.Data)
			if err != nil {
				e.lg.Error("leader-epoch log: skipping an unreadable record; that epoch bump is lost", "offset", en.Offset, "err", err)
			} else {
				out = append(out, r)
			}
			e.next = en.Offset + 1
		}
	}
}

// Append appends r; the caller applies it (a later ReadNew returns it too, harmlessly).
func (e *EpochLog) Append(ctx context.Context, r EpochRecord) error {
	if _, err := e.log.Append(ctx, 0, [][]byte{r.encode(nil)}); err != nil {
		return fmt.Errorf("appending to the leader-epoch log: %w", err)
	}
	return nil
}
