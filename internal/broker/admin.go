package broker

import (
	"fmt"
	"log/slog"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/kafkareq"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// This file holds what the topic administration and config APIs share: CreateTopics,
// DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs.

// apiError is a Kafka error code with the message sent to the client next to it.
type apiError struct {
	code int16
	msg  string
}

func newAPIError(e *kerr.Error, format string, args ...any) *apiError {
	return &apiError{code: e.Code, msg: fmt.Sprintf(format, args...)}
}

// fields returns the error code and message fields of a result; a nil error is success.
func (e *apiError) fields() (int16, *string) {
	if e == nil {
		return 0, nil
	}
	msg := e.msg
	return e.code, &msg
}

// maxTopicPartitions is Iggy's limit on partitions per topic (and per CreatePartitions call).
const maxTopicPartitions = 1000

// adminRefusal is the answer to administration requests this gateway cannot serve at all:
// without the bridge nothing can be created, changed or described (docs/CONFIGURATION.md,
// "Bridge to Iggy"). Kafka's NOT_CONTROLLER is what an admin client expects from a broker
// that does not manage topics.
func (b *Broker) adminRefusal() *apiError {
	if b.bridgeOff() {
		return newAPIError(kerr.NotController, "this gateway runs without the Iggy bridge (IGGY_KAFKA_BRIDGE_ENABLED=false): topics and their configs cannot be managed")
	}
	return nil
}

// repeats applies Kafka's rule for an entry that a CreateTopics, DeleteTopics,
// CreatePartitions or AlterConfigs request names more than once: its first occurrence is
// answered with INVALID_REQUEST and the others are left out of the response.
type repeats struct {
	dup, answered map[string]bool
}

// occurrence is what an entry of a request is in terms of repeats.
type occurrence int

const (
	onlyOccurrence occurrence = iota // named once: answer it on its merits
	firstRepeat                      // answer INVALID_REQUEST
	laterRepeat                      // leave out of the response
)

// findRepeats finds the repeats among n entries, where key(i) identifies entry i.
func findRepeats(n int, key func(i int) string) repeats {
	dup := kafkareq.Repeated(n, key)
	return repeats{dup: dup, answered: make(map[string]bool, len(dup))}
}

// of classifies the entry identified by key; call it once per entry, in request order.
func (r repeats) of(key string) occurrence {
	switch {
	case !r.dup[key]:
		return onlyOccurrence
	case r.answered[key]:
		return laterRepeat
	}
	r.answered[key] = true
	return firstRepeat
}

// checkReplicas validates the manual replica assignment of one partition. Iggy places and
// replicates partitions itself and Metadata reports this gateway as the single replica of
// every partition, so the only assignment that can be honoured is exactly that one; other
// brokers are "not registered" as far as Kafka clients can tell.
func (b *Broker) checkReplicas(partition int32, replicas []int32) *apiError {
	if len(replicas) == 0 {
		return newAPIError(kerr.InvalidReplicaAssignment, "the manual assignment of partition %d has an empty replica list", partition)
	}
	for i, id := range replicas {
		if id != b.nodeID() {
			return newAPIError(kerr.InvalidReplicaAssignment, "the manual assignment of partition %d includes broker %d, but no such broker is registered (the only broker is %d)", partition, id, b.nodeID())
		}
		if i > 0 {
			return newAPIError(kerr.InvalidReplicaAssignment, "the manual assignment of partition %d includes broker %d more than once", partition, id)
		}
	}
	return nil
}

// checkBrokerName validates the name of a BROKER config resource: empty (the cluster-wide
// default) or this gateway's node id, as Kafka requires of the broker a request reaches.
func (b *Broker) checkBrokerName(name string) *apiError {
	if name == "" || name == strconv.Itoa(int(b.nodeID())) {
		return nil
	}
	return newAPIError(kerr.InvalidRequest, "unexpected broker id %q: this is broker %d (or use the empty name for the cluster default)", name, b.nodeID())
}

// logAdminError maps err and logs the failures that are not the client's doing.
func (b *Broker) logAdminError(cc *listener.ConnContext, op, topic string, err error) *apiError {
	aerr := adminError(topic, err)
	switch aerr.code {
	case kerr.UnknownTopicOrPartition.Code, kerr.TopicAlreadyExists.Code:
	default:
		b.logEntry(slog.LevelWarn, logAdminFailed, op+" failed", "conn", cc.ID, "topic", topic, "kafka_error", aerr.code, "err", err)
	}
	return aerr
}
