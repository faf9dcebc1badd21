package broker

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// createTopic creates the Iggy topic behind a Kafka topic (and its stream when missing), and
// returns it resolved. A topic created concurrently by someone else counts as created.
func (b *Broker) createTopic(ctx context.Context, cc *listener.ConnContext, kafkaTopic string, partitions uint32, opts iggy.TopicOptions) (topicmap.Resolved, error) {
	r, err := b.createNewTopic(ctx, cc, kafkaTopic, partitions, opts)
	if iggy.IsCode(err, iggy.CodeTopicNameAlreadyExists) {
		b.topics.Invalidate(kafkaTopic)
		return b.topics.Resolve(ctx, kafkaTopic)
	}
	return r, err
}

// createNewTopic is createTopic for CreateTopics: a topic that already exists is an error
// carrying Iggy's TopicNameAlreadyExists code.
func (b *Broker) createNewTopic(ctx context.Context, cc *listener.ConnContext, kafkaTopic string, partitions uint32, opts iggy.TopicOptions) (topicmap.Resolved, error) {
	if opts.EnforceFsync == nil && opts.MessagesRequiredToSave == 0 {
		opts = withFlush(opts, b.defaultFlushMode()) // docs/DURABILITY.md
	}
	t := b.topics.Map().Resolve(kafkaTopic)
	s := b.storage(cc)
	topic, err := s.CreateTopic(ctx, iggy.Name(t.Stream), t.Topic, partitions, opts)
	if isNotFound(err) {
		if _, serr := iggy.EnsureStream(ctx, s, t.Stream); serr != nil {
			return topicmap.Resolved{}, fmt.Errorf("create stream %q: %w", t.Stream, serr)
		}
		topic, err = s.CreateTopic(ctx, iggy.Name(t.Stream), t.Topic, partitions, opts)
	}
	if err != nil {
		return topicmap.Resolved{}, fmt.Errorf("create topic %q in stream %q: %w", t.Topic, t.Stream, err)
	}
	r := topicmap.Resolved{Kafka: kafkaTopic, Target: t, TopicID: topic.ID, Partitions: topic.PartitionsCount, CreatedAt: topic.CreatedAt}
	b.topics.Store(r)
	b.log.Info("created topic", "topic", kafkaTopic, "iggy_stream", t.Stream, "iggy_topic", t.Topic, "partitions", topic.PartitionsCount)
	return r, nil
}

// readTopic reads the Iggy topic behind a Kafka topic that a per-partition request
// (ListOffsets, OffsetForLeaderEpoch, DeleteRecords) names, or returns instead the error code
// to answer each of its partitions with: NOT_LEADER_OR_FOLLOWER without the bridge,
// UNKNOWN_TOPIC_OR_PARTITION for an invalid name or a missing topic (whose cached resolution
// is dropped), the read's own error otherwise, logged as logKind ("<what>: topic read failed").
func (b *Broker) readTopic(ctx context.Context, cc *listener.ConnContext, kafkaTopic, logKind, what string) (topicmap.Target, *iggy.Topic, int16) {
	if b.bridgeOff() {
		return topicmap.Target{}, nil, kerr.NotLeaderForPartition.Code
	}
	if topicmap.ValidateKafkaName(kafkaTopic) != nil {
		return topicmap.Target{}, nil, kerr.UnknownTopicOrPartition.Code
	}
	target := b.topics.Map().Resolve(kafkaTopic)
	topic, err := b.storage(cc).GetTopic(ctx, iggy.Name(target.Stream), iggy.Name(target.Topic))
	if err != nil {
		code := dataErrorCode(err, false)
		if isNotFound(err) {
			b.topics.Invalidate(kafkaTopic)
		} else {
			b.logEntry(slog.LevelWarn, logKind, what+": topic read failed", "conn", cc.ID, "topic", kafkaTopic, "kafka_error", code, "err", err)
		}
		return target, nil, code
	}
	b.noteTopicOf(target, topic)
	return target, topic, 0
}
