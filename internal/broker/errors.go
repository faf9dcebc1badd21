package broker

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
	"github.com/iggygw/iggy-gateway-kafka/internal/mapping"
)

// This file is the one place where errors from Iggy (and from the record decoders) become
// Kafka error codes: topic metadata, the data path, Fetch's tolerated set, topic
// administration and produced-record refusals.

// apiFamily is the kind of Kafka API an Iggy error is answered in. Each family answers
// "storage temporarily unavailable" with the retriable code its clients retry on
// (docs/DATA-PATH.md, "When Iggy is unavailable").
type apiFamily int

const (
	topicFamily    apiFamily = iota // Metadata and other per-topic answers
	partitionRead                   // Fetch, ListOffsets
	partitionWrite                  // Produce
	groupFamily                     // the offset and group APIs
)

// unavailableCode is the answer of each family while Iggy cannot be reached or refuses the
// bridge's login.
var unavailableCode = [...]int16{
	topicFamily:    kerr.LeaderNotAvailable.Code,
	partitionRead:  kerr.NotLeaderForPartition.Code,
	partitionWrite: kerr.NotLeaderForPartition.Code,
	groupFamily:    kerr.CoordinatorLoadInProgress.Code,
}

// storageUnavailable reports whether err means that Iggy cannot serve the gateway for now: it
// is unreachable, the connection failed, or it refuses the bridge account's login (after an
// Iggy restart that forgot the account, docs/OPERATIONS.md). None of these is the client's
// fault, and each may go away without anyone changing the request.
func storageUnavailable(err error) bool {
	return errors.Is(err, iggy.ErrConnection) || iggy.IsLoginRejected(err) ||
		iggy.IsCode(err, iggy.CodeTransientNotAccepted, iggy.CodeDisconnected, iggy.CodeNotConnected, iggy.CodeStaleClient)
}

// kafkaCode is the one mapping of an Iggy error met in an API of family f to a Kafka error
// code. Unavailable storage answers the family's retriable code; a timeout answers
// REQUEST_TIMED_OUT (Fetch folds it into NOT_LEADER_OR_FOLLOWER, see fetchErrorCode), except in
// the group APIs, whose clients retry the family's code; a write that may have landed answers
// REQUEST_TIMED_OUT, so that the producer retries knowing a duplicate is possible.
func kafkaCode(err error, f apiFamily) int16 {
	switch {
	case err == nil:
		return 0
	case iggy.IsLoginRejected(err):
		return unavailableCode[f] // before isUnauthorized: a login refused with 41 is no missing permission
	case isNotFound(err), (f == partitionRead || f == partitionWrite) && iggy.IsCode(err, iggy.CodePartitionNotFound, iggy.CodeNoPartitions):
		return kerr.UnknownTopicOrPartition.Code
	case isUnauthorized(err):
		return kerr.TopicAuthorizationFailed.Code
	case f == partitionWrite && iggy.MaybeApplied(err), iggy.IsCode(err, iggy.CodeTransientNotCommitted):
		return kerr.RequestTimedOut.Code
	case errors.Is(err, context.DeadlineExceeded) && f != groupFamily:
		return kerr.RequestTimedOut.Code
	case storageUnavailable(err), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return unavailableCode[f]
	case f == topicFamily || f == groupFamily:
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

// warnIggy logs a failed Iggy call of a request, unless the request's client went away (its
// context was cancelled): a fetch cancelled because its connection closed is no failure.
func (b *Broker) warnIggy(ctx context.Context, msg string, args ...any) {
	if errors.Is(ctx.Err(), context.Canceled) {
		b.log.Debug(msg, args...)
		return
	}
	b.log.Warn(msg, args...)
}

// isNotFound reports whether err is Iggy's "stream or topic not found".
func isNotFound(err error) bool {
	return iggy.IsCode(err, iggy.CodeStreamIDNotFound, iggy.CodeStreamNameNotFound,
		iggy.CodeTopicIDNotFound, iggy.CodeTopicNameNotFound)
}

// isUnauthorized reports whether the bridge account lacks a permission.
func isUnauthorized(err error) bool {
	return iggy.IsCode(err, iggy.CodeUnauthorized)
}

// topicErrorCode maps an error met while resolving or creating a topic to the per-topic Kafka
// code of metadata-style responses.
func topicErrorCode(err error) int16 { return kafkaCode(err, topicFamily) }

// dataErrorCode maps an error of the data path (a send, a poll, a topic read) to the
// per-partition Kafka code; write tells a SendMessages apart.
func dataErrorCode(err error, write bool) int16 {
	if write {
		return kafkaCode(err, partitionWrite)
	}
	return kafkaCode(err, partitionRead)
}

// fetchErrorCode folds a code into the set the Java consumer accepts on a Fetch partition
// without failing the application (0, 1, 3, 6, 29, 74, 75, -1; the two leader-epoch errors
// make it refresh metadata and validate its position): timeouts become retriable
// NOT_LEADER_OR_FOLLOWER, anything else UNKNOWN_SERVER_ERROR, which it logs and retries.
func fetchErrorCode(code int16) int16 {
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

// adminError maps an error of a topic administration call on Kafka topic `topic` (create,
// delete, add partitions, update options) to the Kafka error and message of its result.
func adminError(topic string, err error) *apiError {
	switch {
	case isNotFound(err):
		return newAPIError(kerr.UnknownTopicOrPartition, "topic %q does not exist", topic)
	case iggy.IsCode(err, iggy.CodeTopicNameAlreadyExists):
		return newAPIError(kerr.TopicAlreadyExists, "topic %q already exists", topic)
	case isUnauthorized(err) && !iggy.IsLoginRejected(err):
		return newAPIError(kerr.TopicAuthorizationFailed, "the gateway's Iggy account is not allowed to change topic %q", topic)
	case iggy.IsCode(err, iggy.CodeInvalidTopicSize):
		return newAPIError(kerr.InvalidConfig, "Iggy refused retention.bytes for topic %q: it must be -1 or at least the topic's segment size", topic)
	case iggy.IsCode(err, iggy.CodeTooManyPartitions, iggy.CodeInvalidPartitionsCount):
		return newAPIError(kerr.InvalidPartitions, "Iggy refused the partition count of topic %q: a topic has 1 to %d partitions", topic, maxTopicPartitions)
	case iggy.IsCode(err, iggy.CodeInvalidTopicName):
		return newAPIError(kerr.InvalidTopicException, "Iggy refused the name of topic %q", topic)
	case iggy.IsLoginRejected(err):
		return newAPIError(kerr.RequestTimedOut, "Iggy refuses the gateway's bridge account for now; topic %q was not changed", topic)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return newAPIError(kerr.RequestTimedOut, "Iggy did not answer in time for topic %q; the change may or may not have been applied", topic)
	case errors.Is(err, iggy.ErrConnection):
		return newAPIError(kerr.RequestTimedOut, "the connection to Iggy failed during the change of topic %q; it may or may not have been applied", topic)
	default:
		return newAPIError(kerr.UnknownServerError, "topic %q: %v", topic, err)
	}
}

// recordErrorCode maps a refusal of a produced batch (internal/kbatch, internal/mapping) to
// its Kafka code.
func recordErrorCode(err error) int16 {
	switch {
	case errors.Is(err, kbatch.ErrBudgetExceeded), errors.Is(err, mapping.ErrTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, kbatch.ErrCorrupt):
		return kerr.CorruptMessage.Code
	default:
		return kerr.InvalidRecord.Code
	}
}
