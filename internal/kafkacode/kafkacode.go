// Package kafkacode maps errors from Iggy, and from the record decoders, to Kafka error codes:
// the one mapping every handler and the data plane answer with (docs/DATA-PATH.md, "When Iggy
// is unavailable"). It knows Iggy's error codes and Kafka's, and nothing of requests.
package kafkacode

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
	"github.com/iggygw/iggy-gateway-kafka/internal/mapping"
)

// This package is the one place where errors from Iggy (and from the record decoders) become
// Kafka error codes: topic metadata, the data path, Fetch's tolerated set, topic
// administration and produced-record refusals.

// Family is the kind of Kafka API an Iggy error is answered in. Each family answers
// "storage temporarily unavailable" with the retriable code its clients retry on
// (docs/DATA-PATH.md, "When Iggy is unavailable").
type Family int

const (
	Topics         Family = iota // Metadata and other per-topic answers
	PartitionRead                // Fetch, ListOffsets
	PartitionWrite               // Produce
	Groups                       // the offset and group APIs
)

// unavailableCode is the answer of each family while Iggy cannot be reached or refuses the
// bridge's login.
var unavailableCode = [...]int16{
	Topics:         kerr.LeaderNotAvailable.Code,
	PartitionRead:  kerr.NotLeaderForPartition.Code,
	PartitionWrite: kerr.NotLeaderForPartition.Code,
	Groups:         kerr.CoordinatorLoadInProgress.Code,
}

// StorageUnavailable reports whether err means that Iggy cannot serve the gateway for now: it
// is unreachable, the connection failed, or it refuses the bridge account's login (after an
// Iggy restart that forgot the account, docs/OPERATIONS.md). None of these is the client's
// fault, and each may go away without anyone changing the request.
func StorageUnavailable(err error) bool {
	return errors.Is(err, iggy.ErrConnection) || iggy.IsLoginRejected(err) ||
		iggy.IsCode(err, iggy.CodeTransientNotAccepted, iggy.CodeDisconnected, iggy.CodeNotConnected, iggy.CodeStaleClient)
}

// kafkaCode is the one mapping of an Iggy error met in an API of family f to a Kafka error
// code. Unavailable storage answers the family's retriable code; a timeout answers
// REQUEST_TIMED_OUT (Fetch folds it into NOT_LEADER_OR_FOLLOWER, see ForFetch), except in
// the group APIs, whose clients retry the family's code; a write that may have landed answers
// REQUEST_TIMED_OUT, so that the producer retries knowing a duplicate is possible.
func Of(err error, f Family) int16 {
	switch {
	case err == nil:
		return 0
	case iggy.IsLoginRejected(err):
		return unavailableCode[f] // before IsUnauthorized: a login refused with 41 is no missing permission
	case IsNotFound(err), (f == PartitionRead || f == PartitionWrite) && iggy.IsCode(err, iggy.CodePartitionNotFound, iggy.CodeNoPartitions):
		return kerr.UnknownTopicOrPartition.Code
	case IsUnauthorized(err):
		return kerr.TopicAuthorizationFailed.Code
	case f == PartitionWrite && iggy.MaybeApplied(err), iggy.IsCode(err, iggy.CodeTransientNotCommitted):
		return kerr.RequestTimedOut.Code
	case errors.Is(err, context.DeadlineExceeded) && f != Groups:
		return kerr.RequestTimedOut.Code
	case StorageUnavailable(err), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return unavailableCode[f]
	case f == Topics || f == Groups:
		return unavailableCode[f] // what else Iggy says about a topic lookup is best retried
	case iggy.IsCode(err, iggy.CodeTooBigUserHeaders, iggy.CodeTooBigMessagePayload):
		return kerr.MessageTooLarge.Code
	case iggy.IsCode(err, iggy.CodeEmptyMessagePayload, iggy.CodeInvalidMessagePayloadLength, iggy.CodeInvalidHeaderKind):
		return kerr.InvalidRecord.Code
	case iggy.IsCode(err, iggy.CodeInvalidMessageChecksum, iggy.CodeInvalidBatchChecksum, iggy.CodeInvalidMessageTimestampDelta):
		return kerr.CorruptMessage.Code
	default:
		return kerr.UnknownServerError.Code
	}
}

// IsNotFound reports whether err is Iggy's "stream or topic not found".
func IsNotFound(err error) bool {
	return iggy.IsCode(err, iggy.CodeStreamIDNotFound, iggy.CodeStreamNameNotFound,
		iggy.CodeTopicIDNotFound, iggy.CodeTopicNameNotFound)
}

// IsUnauthorized reports whether the bridge account lacks a permission.
func IsUnauthorized(err error) bool {
	return iggy.IsCode(err, iggy.CodeUnauthorized)
}

// ForTopic maps an error met while resolving or creating a topic to the per-topic Kafka
// code of metadata-style responses.
func ForTopic(err error) int16 { return Of(err, Topics) }

// ForData maps an error of the data path (a send, a poll, a topic read) to the
// per-partition Kafka code; write tells a SendMessages apart.
func ForData(err error, write bool) int16 {
	if write {
		return Of(err, PartitionWrite)
	}
	return Of(err, PartitionRead)
}

// ForFetch folds a code into the set the Java consumer accepts on a Fetch partition
// without failing the application (0, 1, 3, 6, 29, 74, 75, -1; the two leader-epoch errors
// make it refresh metadata and validate its position): timeouts become retriable
// NOT_LEADER_OR_FOLLOWER, anything else UNKNOWN_SERVER_ERROR, which it logs and retries.
func ForFetch(code int16) int16 {
	switch code {
	case 0, kerr.OffsetOutOfRange.Code, kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code,
		kerr.TopicAuthorizationFailed.Code, kerr.UnknownServerError.Code,
		kerr.FencedLeaderEpoch.Code, kerr.UnknownLeaderEpoch.Code:
		return code
	case kerr.RequestTimedOut.Code:
		return kerr.NotLeaderForPartition.Code
	case kerr.InvalidTopicException.Code:
		return kerr.UnknownTopicOrPartition.Code
	default:
		return kerr.UnknownServerError.Code
	}
}

// ForRecord maps a refusal of a produced batch (internal/kbatch, internal/mapping) to
// its Kafka code.
func ForRecord(err error) int16 {
	switch {
	case errors.Is(err, kbatch.ErrBudgetExceeded), errors.Is(err, mapping.ErrTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, kbatch.ErrCorrupt):
		return kerr.CorruptMessage.Code
	default:
		return kerr.InvalidRecord.Code
	}
}
