package iggy

import (
	"errors"
	"fmt"
)

// Error is an error reported by the Iggy server (reply status, result section or eviction
// reason), carrying Iggy's numeric error code.
type Error struct {
	Code uint32
	Op   string // command that failed, for messages
}

func (e *Error) Error() string {
	return fmt.Sprintf("iggy %s: error %d (%s)", e.Op, e.Code, CodeName(e.Code))
}

// CodeOf returns the Iggy error code carried by err, if any.
func CodeOf(err error) (uint32, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return 0, false
}

// IsCode reports whether err carries one of codes.
func IsCode(err error, codes ...uint32) bool {
	c, ok := CodeOf(err)
	if !ok {
		return false
	}
	for _, want := range codes {
		if c == want {
			return true
		}
	}
	return false
}

// Iggy error codes the gateway cares about (core/common/src/error/iggy_error.rs).
const (
	CodeError                            uint32 = 1
	CodeInvalidCommand                   uint32 = 3
	CodeInvalidFormat                    uint32 = 4
	CodeFeatureUnavailable               uint32 = 5
	CodeInvalidIdentifier                uint32 = 6
	CodeDisconnected                     uint32 = 8
	CodeResourceNotFound                 uint32 = 20 // also what GetUser reports for a missing user
	CodeStaleClient                      uint32 = 30
	CodeUnauthenticated                  uint32 = 40
	CodeUnauthorized                     uint32 = 41
	CodeInvalidCredentials               uint32 = 42
	CodeInvalidUsername                  uint32 = 43
	CodeInvalidPassword                  uint32 = 44
	CodeUserAlreadyExists                uint32 = 46
	CodeUserInactive                     uint32 = 47
	CodePersonalAccessTokenAlreadyExists uint32 = 51
	CodeInvalidPersonalAccessToken       uint32 = 53
	CodePersonalAccessTokenExpired       uint32 = 54
	CodeTransientNotCommitted            uint32 = 57
	CodeTransientNotAccepted             uint32 = 58
	CodeNotConnected                     uint32 = 61
	CodeStreamIDNotFound                 uint32 = 1009
	CodeStreamNameNotFound               uint32 = 1010
	CodeStreamNameAlreadyExists          uint32 = 1012
	CodeInvalidStreamName                uint32 = 1013
	CodeInvalidTopicSize                 uint32 = 1019
	CodeTopicIDNotFound                  uint32 = 2010
	CodeTopicNameNotFound                uint32 = 2011
	CodeTopicNameAlreadyExists           uint32 = 2013
	CodeInvalidTopicName                 uint32 = 2014
	CodeTooManyPartitions                uint32 = 2015
	CodeInvalidPartitionsCount           uint32 = 2019
	CodePartitionNotFound                uint32 = 3007
	CodeNoPartitions                     uint32 = 3008
	CodeConsumerOffsetNotFound           uint32 = 3021
	CodeTooBigUserHeaders                uint32 = 4017
	CodeTooBigMessagePayload             uint32 = 4022
	CodeEmptyMessagePayload              uint32 = 4024
	CodeInvalidMessagePayloadLength      uint32 = 4025
	CodeInvalidMessageChecksum           uint32 = 4027
	CodeInvalidMessageTimestampDelta     uint32 = 4038
	CodeInvalidBatchChecksum             uint32 = 4039
	CodeInvalidHeaderKind                uint32 = 4040
	CodeUnsupportedOptionKey             uint32 = 4041
	CodeInvalidOptionValue               uint32 = 4042
	CodeOptionsBlockTooLarge             uint32 = 4043
	CodeInvalidOffset                    uint32 = 4100
	CodeConsumerGroupIDNotFound          uint32 = 5000
	CodeConsumerGroupNameNotFound        uint32 = 5003
	CodeConsumerGroupNameAlreadyExists   uint32 = 5004
	CodeConsumerGroupMemberNotFound      uint32 = 5006
	CodeConsumerGroupPartitionNotOwned   uint32 = 5009
	CodeIncompatibleProtocolVersion      uint32 = 14003
)

// ErrConnection is matched (errors.Is) by every error caused by the connection or session
// rather than by a server decision: dial, TLS and I/O failures, timeouts, evictions, and
// replies that break the protocol. Such a request may or may not have been applied; see
// MaybeApplied. A server rejection (*Error) never matches it.
var ErrConnection = errors.New("iggy: connection failed")

// ErrReplyTooLarge is wrapped by the error of a call whose reply declared more bytes than a
// frame may hold (a poll for too many large messages): the connection is dropped, since the
// reply cannot be skipped, and the call is not made again; asking for less succeeds.
var ErrReplyTooLarge = errors.New("iggy: reply larger than a frame may be")

// ErrClosed is returned by calls on a closed Client or Conn. It matches ErrConnection.
var ErrClosed = &ConnError{Op: "call", Err: errors.New("iggy: client closed")}

// ConnError is a connection-level failure of one command. It matches ErrConnection, and
// unwraps to the cause (a net error, context.DeadlineExceeded, or an *Error carried by an
// eviction).
type ConnError struct {
	Op  string
	Err error
	// Sent reports that the request had been (at least partly) written before the failure,
	// so the server may have applied it: replaying a SendMessages could duplicate messages.
	Sent bool
}

func (e *ConnError) Error() string {
	s := "iggy " + e.Op + ": connection failed"
	if e.Sent {
		s += " after the request was sent"
	}
	return s + ": " + e.Err.Error()
}

func (e *ConnError) Unwrap() error { return e.Err }

// Is makes every ConnError match ErrConnection.
func (e *ConnError) Is(target error) bool { return target == ErrConnection }

// MaybeApplied reports whether err leaves it unknown if the server applied the request: a
// connection failure after the request was sent. Server rejections and failures before
// sending report false.
func MaybeApplied(err error) bool {
	var ce *ConnError
	return errors.As(err, &ce) && ce.Sent
}
