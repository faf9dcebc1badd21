package broker

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
)

// adminError maps an error of a topic administration call on Kafka topic `topic` (create,
// delete, add partitions, update options) to the Kafka error and message of its result.
func adminError(topic string, err error) *apiError {
	switch {
	case kafkacode.IsNotFound(err):
		return newAPIError(kerr.UnknownTopicOrPartition, "topic %q does not exist", topic)
	case iggy.IsCode(err, iggy.CodeTopicNameAlreadyExists):
		return newAPIError(kerr.TopicAlreadyExists, "topic %q already exists", topic)
	case kafkacode.IsUnauthorized(err) && !iggy.IsLoginRejected(err):
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
