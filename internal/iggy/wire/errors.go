package wire

import (
	"errors"
	"fmt"
)

// FormatError reports bytes that do not decode or do not validate. Code is the Iggy error code
// a server answers with for such input (4 InvalidFormat unless a more specific code applies).
type FormatError struct {
	Code   uint32
	Reason string
}

func (e *FormatError) Error() string { return "iggy wire: " + e.Reason }

// FrameSizeError reports a frame declaring Size bytes, more than Limit (MaxFrameSize). From a
// server it is a reply too large to take (a poll for too many large messages), which asking
// for less avoids.
type FrameSizeError struct{ Size, Limit uint32 }

func (e *FrameSizeError) Error() string {
	return fmt.Sprintf("iggy wire: frame size %d over the limit of %d", e.Size, e.Limit)
}

// ErrTruncated is wrapped by errors about input that ends before a declared field does.
var ErrTruncated = errors.New("iggy wire: truncated input")

// Iggy error codes produced by the codec's validation.
const (
	codeInvalidFormat          uint32 = 4
	codeInvalidIdentifier      uint32 = 6
	codeTooBigUserHeaders      uint32 = 4017
	codeEmptyMessagePayload    uint32 = 4024
	codeInvalidPayloadLength   uint32 = 4025
	codeInvalidMessageChecksum uint32 = 4027
	codeInvalidTimestampDelta  uint32 = 4038
	codeInvalidBatchChecksum   uint32 = 4039
	codeInvalidHeaderKind      uint32 = 4040
	codeUnsupportedOptionKey   uint32 = 4041
	codeInvalidOptionValue     uint32 = 4042
	codeOptionsBlockTooLarge   uint32 = 4043
)

func formatErr(code uint32, format string, args ...any) error {
	return &FormatError{Code: code, Reason: fmt.Sprintf(format, args...)}
}

func truncated(what string, need, have int) error {
	return fmt.Errorf("%w: %s needs %d bytes, %d left", ErrTruncated, what, need, have)
}

// CodeOf returns the Iggy error code a server should answer with for a decoding error err:
// the FormatError code, or 4 (InvalidFormat) for anything else.
func CodeOf(err error) uint32 {
	var fe *FormatError
	if errors.As(err, &fe) {
		return fe.Code
	}
	return codeInvalidFormat
}
