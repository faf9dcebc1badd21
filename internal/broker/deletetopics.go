package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/authz"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkareq"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

func init() {
	// Errors are per topic only: an undecodable request closes the connection.
	register(kmsg.DeleteTopics, route{serve: typed((*Broker).deleteTopics)})
}

// deleteTopics deletes the Iggy topic behind each Kafka topic; its stream is kept. The
// gateway has no topic ids (Metadata reports none), so v6 deletions by id answer
// UNKNOWN_TOPIC_ID. The gateway's own stream cannot be reached: the topic map never resolves
// a Kafka name to it.
func (b *Broker) deleteTopics(ctx context.Context, cc *listener.ConnContext, req *kmsg.DeleteTopicsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	ctx, cancel := kafkareq.Context(ctx, req.TimeoutMillis)
	defer cancel()
	topics := req.Topics
	if req.Version < 6 {
		topics = make([]kmsg.DeleteTopicsRequestTopic, len(req.TopicNames))
		for i := range req.TopicNames {
			topics[i].Topic = &req.TopicNames[i]
		}
	}
	// Repeats are found by name, or by id for entries without a name.
	key := func(i int) string {
		if n := topics[i].Topic; n != nil {
			return "n" + *n
		}
		return "i" + string(topics[i].TopicID[:])
	}
	reps := findRepeats(len(topics), key)
	for i, rt := range topics {
		res := kmsg.NewDeleteTopicsResponseTopic()
		res.Topic, res.TopicID = rt.Topic, rt.TopicID
		var err *apiError
		switch occ := reps.of(key(i)); {
		case occ == laterRepeat:
			continue
		case occ == firstRepeat:
			err = newAPIError(kerr.InvalidRequest, "the topic appears more than once in the request")
		case rt.Topic == nil && rt.TopicID == [16]byte{}:
			err = newAPIError(kerr.InvalidRequest, "neither topic name nor id were specified")
		case rt.Topic != nil && rt.TopicID != [16]byte{}:
			err = newAPIError(kerr.InvalidRequest, "you may not specify both topic name and topic id")
		case rt.Topic == nil:
			err = newAPIError(kerr.UnknownTopicID, "this gateway has no topic ids: delete topics by name")
		default:
			err = b.deleteOneTopic(ctx, cc, *rt.Topic)
		}
		res.ErrorCode, res.ErrorMessage = err.fields()
		resp.Topics = append(resp.Topics, res)
	}
	return resp, nil
}

func (b *Broker) deleteOneTopic(ctx context.Context, cc *listener.ConnContext, name string) *apiError {
	if err := b.controllerRefusal(); err != nil {
		return err
	}
	if topicmap.ValidateKafkaName(name) != nil {
		// No topic can have this name.
		return newAPIError(kerr.UnknownTopicOrPartition, "topic %q does not exist", name)
	}
	t := b.topics.Map().Resolve(name)
	deleted := authz.BeforeDelete(ctx, b.storage(cc), t.Stream, t.Topic) // ids, for Revoke below
	err := b.storage(cc).DeleteTopic(ctx, iggy.Name(t.Stream), iggy.Name(t.Topic))
	b.topics.Invalidate(name)
	b.data.TopicDeleted(t, err == nil) // also on error: the topic may be gone
	if err != nil {
		return b.logAdminError(cc, "delete topic", name, err)
	}
	// Iggy reuses the id for the next topic of the stream: per-topic permissions on this one
	// must not pass to it (docs/SECURITY.md, "Reused topic ids").
	if users, err := deleted.Revoke(ctx); err != nil {
		b.log.Warn("withdrawing the permissions on a deleted topic failed: the next topic created in its stream may inherit them",
			"conn", cc.ID, "topic", name, "iggy_stream", t.Stream, "iggy_topic", t.Topic, "err", err)
	} else if len(users) > 0 {
		b.log.Info("withdrew the permissions on a deleted topic", "conn", cc.ID, "topic", name, "users", users)
	}
	if b.state != nil {
		// A stale entry is harmless (the next topic of this name gets another id, or
		// CreateTopics forgets it), so a failure here is only logged.
		if err := b.state.Forget(ctx, name); err != nil {
			b.log.Warn("forgetting the stored state of a deleted topic failed", "conn", cc.ID, "topic", name, "err", err)
		}
	}
	b.log.Info("deleted topic", "conn", cc.ID, "topic", name, "iggy_stream", t.Stream, "iggy_topic", t.Topic)
	return nil
}
