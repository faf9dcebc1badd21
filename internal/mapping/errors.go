package mapping

import (
	"errors"
	"fmt"
)

var (
	// ErrTooLarge: a record needs a payload over MaxPayloadSize. Kafka: MESSAGE_TOO_LARGE (10).
	ErrTooLarge = errors.New("mapping: record does not fit an Iggy message")
	// ErrUnsupportedVersion: a message claims a mapping or envelope version this build does
	// not implement.
	ErrUnsupportedVersion = errors.New("mapping: unsupported mapping version")
	// ErrCorrupt: a message's user-headers block does not parse, or a gateway-written message
	// carries a malformed marker or envelope.
	ErrCorrupt = errors.New("mapping: corrupt message")
)

// MessageError is a message that cannot become a Kafka record. It wraps ErrCorrupt or
// ErrUnsupportedVersion; Fetch turns it into a partition error rather than skipping data.
type MessageError struct {
	Offset uint64
	Err    error
}

func (e *MessageError) Error() string {
	return fmt.Sprintf("message at offset %d: %v", e.Offset, e.Err)
}

func (e *MessageError) Unwrap() error { return e.Err }

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
