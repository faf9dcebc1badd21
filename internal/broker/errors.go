package broker

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

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
// code of metadata-style responses. Failures that may go away (Iggy unreachable, timeouts)
// become retriable codes so that clients retry instead of giving up.
func topicErrorCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case isNotFound(err):
		return kerr.UnknownTopicOrPartition.Code
	case isUnauthorized(err):
		return kerr.TopicAuthorizationFailed.Code
	case errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut.Code
	default:
		return kerr.LeaderNotAvailable.Code
	}
}
