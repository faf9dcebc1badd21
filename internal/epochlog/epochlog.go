package epochlog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math"
	"sync"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

// Where the leader-epoch log lives: one Iggy topic with one partition in the reserved stream
// (iggylog.ReservedStream), next to the coordinator log.
const (
	Topic      = "__leader_epochs"
	Partitions = 1
)

// ErrCorrupt is returned for a record that does not decode.
var ErrCorrupt = errors.New("corrupt leader-epoch record")

// Record says that leader epoch Epoch of an Iggy partition starts at offset Start,
// because the partition's log end was found at Start after having been at TruncatedFrom.
type Record struct {
	Stream, Topic string
	Partition     uint32
	Epoch         int32
	Start         uint64
	TruncatedFrom uint64
	Time          int64 // ms since the Unix epoch
}

// Record encoding, version 1. Integers are big-endian; a string is a u16 length and its bytes.
//
//	record = version:u8 stream:str topic:str partition:u32 epoch:i32 start:u64 truncated_from:u64 time:i64 crc:u32
//	crc    = CRC-32C (Castagnoli) of every byte before it
const (
	recordVersion = 1
	crcSize       = 4
	// fixedSize is the size of the fields after the two strings and before the CRC.
	fixedSize = 4 + 4 + 8 + 8 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encode appends the encoding of r to dst. Names longer than math.MaxUint16 bytes cannot
// be Iggy names, so they never reach here.
func (r *Record) encode(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, recordVersion)
	dst = appendString(dst, r.Stream)
	dst = appendString(dst, r.Topic)
	dst = binary.BigEndian.AppendUint32(dst, r.Partition)
	dst = binary.BigEndian.AppendUint32(dst, uint32(r.Epoch))
	dst = binary.BigEndian.AppendUint64(dst, r.Start)
	dst = binary.BigEndian.AppendUint64(dst, r.TruncatedFrom)
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.Time))
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

func appendString(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// Decode decodes one leader-epoch record.
func Decode(b []byte) (Record, error) {
	if len(b) < 1+crcSize {
		return Record{}, fmt.Errorf("%w: %d bytes is shorter than a record", ErrCorrupt, len(b))
	}
	body, sum := b[:len(b)-crcSize], binary.BigEndian.Uint32(b[len(b)-crcSize:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return Record{}, fmt.Errorf("%w: CRC-32C %08x, record says %08x", ErrCorrupt, got, sum)
	}
	if body[0] != recordVersion {
		return Record{}, fmt.Errorf("%w: version %d", ErrCorrupt, body[0])
	}
	stream, rest, ok1 := cutString(body[1:])
	topic, rest, ok2 := cutString(rest)
	if !ok1 || !ok2 || len(rest) != fixedSize {
		return Record{}, fmt.Errorf("%w: truncated or with trailing bytes", ErrCorrupt)
	}
	be := binary.BigEndian
	r := Record{Stream: stream, Topic: topic, Partition: be.Uint32(rest), Epoch: int32(be.Uint32(rest[4:])),
		Start: be.Uint64(rest[8:]), TruncatedFrom: be.Uint64(rest[16:]), Time: int64(be.Uint64(rest[24:]))}
	if r.Epoch <= 0 || r.Start > math.MaxInt64 || r.TruncatedFrom > math.MaxInt64 {
		return Record{}, fmt.Errorf("%w: epoch %d, start %d, truncated from %d", ErrCorrupt, r.Epoch, r.Start, r.TruncatedFrom)
	}
	return r, nil
}

// cutString reads a u16-length-prefixed string off b.
func cutString(b []byte) (s string, rest []byte, ok bool) {
	if len(b) < 2 {
		return "", nil, false
	}
	n := int(binary.BigEndian.Uint16(b))
	if len(b) < 2+n {
		return "", nil, false
	}
	return string(b[2 : 2+n]), b[2+n:], true
}

// Log reads and appends leader-epoch records. It is safe for concurrent use.
type Log struct {
	log iggylog.Log
	lg  *slog.Logger

	mu   sync.Mutex // serializes reads, so each record is returned once
	next uint64     // offset of the first record not read yet
}

// New returns the leader-epoch log over l (one partition; an iggylog.Topic over
// iggylog.ReservedStream and Topic in production). Corrupt records are logged on lg and
// skipped: a lost epoch bump is not worth a gateway that cannot start.
func New(l iggylog.Log, lg *slog.Logger) *Log {
	return &Log{log: l, lg: lg}
}

// Ensure creates the log if it does not exist.
func (e *Log) Ensure(ctx context.Context) error { return e.log.Ensure(ctx) }

// ReadNew returns the records appended since the previous call (all of them on the first),
// in log order.
func (e *Log) ReadNew(ctx context.Context) ([]Record, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Record
	for {
		entries, err := e.log.ReadFrom(ctx, 0, e.next, 256)
		if err != nil {
			return out, fmt.Errorf("reading the leader-epoch log at %d: %w", e.next, err)
		}
		if len(entries) == 0 {
			return out, nil
		}
		for _, en := range entries {
			r, err := Decode(en.Data)
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
func (e *Log) Append(ctx context.Context, r Record) error {
	if _, err := e.log.Append(ctx, 0, [][]byte{r.encode(nil)}); err != nil {
		return fmt.Errorf("appending to the leader-epoch log: %w", err)
	}
	return nil
}
