package offsets

import (
	"context"
	"fmt"
	"sync"
)

// Log is the coordinator log: an append-only sequence of records per partition.
// Implementations: IggyLog (production) and MemLog (tests).
type Log interface {
	// Ensure creates the log if it does not exist and checks that it has Partitions()
	// partitions.
	Ensure(ctx context.Context) error
	// Partitions returns the number of log partitions.
	Partitions() int
	// Append appends records to partition, contiguously and in order, and returns the offset
	// of the first.
	Append(ctx context.Context, partition int, records [][]byte) (first uint64, err error)
	// ReadFrom returns up to max entries of partition in offset order, starting with the first
	// entry whose offset is >= offset; none when offset is at or past the end.
	ReadFrom(ctx context.Context, partition int, offset uint64, max int) ([]Entry, error)
	// End returns one past the last offset of partition (0 when it is empty).
	End(ctx context.Context, partition int) (uint64, error)
}

// Entry is one record read from the log.
type Entry struct {
	Offset uint64
	Data   []byte
}

// MemLog is an in-memory Log for tests.
type MemLog struct {
	mu    sync.Mutex
	parts [][][]byte
}

// NewMemLog returns an empty in-memory log with the given number of partitions.
func NewMemLog(partitions int) *MemLog {
	return &MemLog{parts: make([][][]byte, partitions)}
}

// Ensure implements Log.
func (l *MemLog) Ensure(context.Context) error { return nil }

// Partitions implements Log.
func (l *MemLog) Partitions() int { return len(l.parts) }

// Append implements Log.
func (l *MemLog) Append(_ context.Context, partition int, records [][]byte) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(partition); err != nil {
		return 0, err
	}
	first := uint64(len(l.parts[partition]))
	for _, r := range records {
		l.parts[partition] = append(l.parts[partition], append([]byte(nil), r...))
	}
	return first, nil
}

// ReadFrom implements Log.
func (l *MemLog) ReadFrom(_ context.Context, partition int, offset uint64, max int) ([]Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(partition); err != nil {
		return nil, err
	}
	var out []Entry
	for o := offset; o < uint64(len(l.parts[partition])) && len(out) < max; o++ {
		out = append(out, Entry{Offset: o, Data: append([]byte(nil), l.parts[partition][o]...)})
	}
	return out, nil
}

// End implements Log.
func (l *MemLog) End(_ context.Context, partition int) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(partition); err != nil {
		return 0, err
	}
	return uint64(len(l.parts[partition])), nil
}

func (l *MemLog) check(partition int) error {
	if partition < 0 || partition >= len(l.parts) {
		return fmt.Errorf("memlog: partition %d out of range [0, %d)", partition, len(l.parts))
	}
	return nil
}
