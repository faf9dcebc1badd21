package memserver

import "fmt"

// Iggy error codes the server answers with (core/common/src/error/iggy_error.rs).
const (
	codeError                        uint32 = 1
	codeInvalidCommand               uint32 = 3
	codeInvalidFormat                uint32 = 4
	codeFeatureUnavailable           uint32 = 5
	codeInvalidIdentifier            uint32 = 6
	codeResourceNotFound             uint32 = 20
	codeUnauthenticated              uint32 = 40
	codeUnauthorized                 uint32 = 41
	codeInvalidCredentials           uint32 = 42
	codeInvalidUsername              uint32 = 43
	codeUserAlreadyExists            uint32 = 46
	codeCannotDeleteUser             uint32 = 48
	codeCannotChangePermissions      uint32 = 49
	codePATAlreadyExists             uint32 = 51
	codePATLimitReached              uint32 = 52
	codeInvalidPATExpiry             uint32 = 56
	codeTransientNotAccepted         uint32 = 58
	codeStreamIDNotFound             uint32 = 1009
	codeStreamNameAlreadyExists      uint32 = 1012
	codeInvalidTopicSize             uint32 = 1019
	codeTopicIDNotFound              uint32 = 2010
	codeTopicNameAlreadyExists       uint32 = 2013
	codeTooManyPartitions            uint32 = 2015
	codeInvalidPartitionsCount       uint32 = 2019
	codePartitionNotFound            uint32 = 3007
	codeConsumerOffsetNotFound       uint32 = 3021
	codeUnsupportedOptionKey         uint32 = 4041
	codeInvalidOptionValue           uint32 = 4042
	codeInvalidOffset                uint32 = 4100
	codeConsumerGroupIDNotFound      uint32 = 5000
	codeConsumerGroupNameExists      uint32 = 5004
	codeConsumerGroupMemberNotFound  uint32 = 5006
	codeConsumerGroupPartitionNotOwn uint32 = 5009
)

// opError is a failed command. A real Iggy server reports failures on two channels, and
// clients decode them differently:
//   - denied: refused before the operation was committed (authorization on reads and on the
//     partition plane, malformed or out-of-bounds requests). The code rides the reply
//     header's status field and the body is empty.
//   - rejected: a committed business rejection of a metadata operation (name taken, not
//     found, ...). The code rides the result section of a result-framed reply.
//
// For operations whose replies are not result-framed both kinds travel as status.
type opError struct {
	code     uint32
	rejected bool
}

func (e *opError) Error() string {
	kind := "denied"
	if e.rejected {
		kind = "rejected"
	}
	return fmt.Sprintf("iggy error %d (%s)", e.code, kind)
}

// deny returns a pre-commit failure carried in the reply status.
func deny(code uint32) *opError { return &opError{code: code} }

// reject returns a committed business rejection carried in the result section.
func reject(code uint32) *opError { return &opError{code: code, rejected: true} }
