package kbatch

import (
	"errors"
	"fmt"
)

// Error classes. Every error this package returns wraps exactly one of them, so the Produce
// handler can answer with the matching Kafka error code.
var (
	// ErrCorrupt: the bytes are damaged (CRC mismatch, malformed record, undecodable
	// compressed data, unknown codec). Kafka: CORRUPT_MESSAGE (2).
	ErrCorrupt = errors.New("kbatch: corrupt record batch")
	// ErrInvalidRecord: well-formed bytes that break the v2 batch rules (magic other than 2,
	// a partial batch or trailing bytes, a record count other than declared). Kafka:
	// INVALID_RECORD (87).
	ErrInvalidRecord = errors.New("kbatch: invalid record batch")
	// ErrBudgetExceeded: decompression would produce more bytes than the budget allows.
	// Kafka: MESSAGE_TOO_LARGE (10).
	ErrBudgetExceeded = errors.New("kbatch: decompressed size exceeds budget")
)

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidRecord}, args...)...)
}
