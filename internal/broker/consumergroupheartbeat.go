package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

func init() {
	register(kmsg.ConsumerGroupHeartbeat, route{
		serve: typed((*Broker).consumerGroupHeartbeat),
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// consumerGroupHeartbeat serves the consumer group protocol (KIP-848): the coordinator assigns
// partitions; this handler only tells it about topics (docs/CONSUMER-GROUPS.md).
func (b *Broker) consumerGroupHeartbeat(ctx context.Context, cc *listener.ConnContext, req *kmsg.ConsumerGroupHeartbeatRequest) (kmsg.Response, error) {
	if err := b.coordinatorError(cc, req.Group); err != nil {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = err.Code
		return resp, nil
	}
	return b.groups.coordinator.ConsumerGroupHeartbeat(ctx, req, groupClient(cc), groupTopics{b: b, cc: cc}), nil
}

// groupTopics is groups.Topics over the topic cache and Iggy.
type groupTopics struct {
	b  *Broker
	cc *listener.ConnContext
}

// Describe resolves the named topics through the topic cache (a heartbeat's usual lookups
// hit it). Names no topic can have, and topics that do not exist, are left out.
func (t groupTopics) Describe(ctx context.Context, names []string) (map[string]groups.TopicMetadata, error) {
	out := make(map[string]groups.TopicMetadata, len(names))
	if t.b.bridgeOff() {
		return out, nil // nothing is stored without the bridge: no topic to assign
	}
	for _, name := range names {
		if topicmap.ValidateKafkaName(name) != nil {
			continue
		}
		r, err := t.b.topics.Resolve(ctx, name)
		switch {
		case err == nil:
			out[name] = groups.TopicMetadata{ID: r.KafkaID(), Partitions: int32(r.Partitions)}
		case kafkacode.IsNotFound(err), kafkacode.IsUnauthorized(err):
		default:
			return nil, err
		}
	}
	return out, nil
}

// All lists every topic of the default stream and the topic map's streams, for regex
// subscriptions.
func (t groupTopics) All(ctx context.Context) (map[string]groups.TopicMetadata, error) {
	out := map[string]groups.TopicMetadata{}
	if t.b.bridgeOff() {
		return out, nil
	}
	m := t.b.topics.Map()
	for _, stream := range m.Streams() {
		topics, err := t.b.storage(t.cc).GetTopics(ctx, iggy.Name(stream))
		if kafkacode.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, it := range topics {
			name, ok := m.KafkaName(stream, it.Name)
			if !ok {
				continue
			}
			r := topicmap.Resolved{Kafka: name, Target: topicmap.Target{Stream: stream, Topic: it.Name}, TopicID: it.ID, Partitions: it.PartitionsCount, CreatedAt: it.CreatedAt}
			out[name] = groups.TopicMetadata{ID: r.KafkaID(), Partitions: int32(r.Partitions)}
		}
	}
	return out, nil
}
