package broker

import (
	"context"
	"fmt"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
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
	if kafkacode.IsNotFound(err) {
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
