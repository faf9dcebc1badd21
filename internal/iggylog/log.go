package iggylog

import (
	"bytes"
	"context"
	"fmt"
	"sync"
)

// Log is an append-only sequence of records per partition.
// Implementations: Topic (production) and Mem (tests).
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

// Mem is an in-memory Log for tests.
type Mem struct {
	mu    sync.Mutex
	parts [][][]byte
}

// NewMem returns an empty in-memory log with the given number of partitions.
func NewMem(partitions int) *Mem {
	return &Mem{parts: make([][][]byte, partitions)}
}

// Ensure implements Log.
func (l *Mem) Ensure(context.Context) error { return nil }

// Partitions implements Log.
func (l *Mem) Partitions() int { return len(l.parts) }

// Append implements Log.
func (l *Mem) Append(_ context.Context, partition int, records [][]byte) (uint64, error) {
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
func (l *Mem) ReadFrom(_ context.Context, partition int, offset uint64, max int) ([]Entry, error) {
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
func (l *Mem) End(_ context.Context, partition int) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(partition); err != nil {
		return 0, err
	}
	return uint64(len(l.parts[partition])), nil
}

// Records returns partition's records in offset order. The slice and the records are the
// log's own, not copies: tests damage a log through them (a flipped byte, a replaced record).
func (l *Mem) Records(partition int) [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.parts[partition]
}

// SetRecords replaces partition's records: tests cut a log's tail or rewrite its history.
func (l *Mem) SetRecords(partition int, records [][]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.parts[partition] = records
}

// Clone returns a deep copy of the log.
func (l *Mem) Clone() *Mem {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := NewMem(len(l.parts))
	for i, p := range l.parts {
		for _, r := range p {
			c.parts[i] = append(c.parts[i], bytes.Clone(r))
		}
	}
	return c
}

func (l *Mem) check(partition int) error {
	if partition < 0 || partition >= len(l.parts) {
		return fmt.Errorf("memlog: partition %d out of range [0, %d)", partition, len(l.parts))
	}
	return nil
}

var (
	_ Log = (*Mem)(nil)
	_ Log = (*Topic)(nil)
)
