package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
)

func init() {
	register(kmsg.OffsetDelete, route{
		serve: typed((*Broker).offsetDelete),
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// offsetDelete deletes committed offsets as Kafka does: partitions that do not exist are
// UNKNOWN_TOPIC_OR_PARTITION; a group with members keeps the offsets of the topics its
// members subscribe to (GROUP_SUBSCRIBED_TO_TOPIC) and refuses everything unless it is a
// consumer group (NON_EMPTY_GROUP); a group known neither in memory nor in storage is
// GROUP_ID_NOT_FOUND. Deletions are acknowledged once they are in the coordinator log.
func (b *Broker) offsetDelete(ctx context.Context, cc *listener.ConnContext, req *kmsg.OffsetDeleteRequest) (kmsg.Response, error) {
	if err := b.coordinatorError(cc, req.Group); err != nil {
		return groupRefusal(req, err), nil
	}
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if b.groups.offsets == nil {
		resp.ErrorCode = offsetsUnavailable.Code
		return resp, nil
	}
	subscribed, active, gerr := b.groups.coordinator.OffsetDeleteGuard(req.Group)
	if gerr == nil && !active {
		if _, _, stored := b.groups.offsets.LookupGroup(req.Group); !stored {
			gerr = kerr.GroupIDNotFound
		}
	}
	if gerr != nil {
		resp.ErrorCode = gerr.Code
		return resp, nil
	}
	var doomed []offsets.TopicPartitions
	topics := b.offsetTopics(ctx)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		del := offsets.TopicPartitions{Topic: t.Topic}
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = topics.code(t.Topic, p.Partition)
			if rp.ErrorCode == 0 && subscribed(t.Topic) {
				rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			}
			if rp.ErrorCode == 0 {
				del.Partitions = append(del.Partitions, p.Partition)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		if len(del.Partitions) > 0 {
			doomed = append(doomed, del)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(doomed) == 0 {
		return resp, nil
	}
	if err := b.groups.offsets.DeleteOffsets(ctx, req.Group, doomed); err != nil {
		// Nothing was acknowledged: fail the request as a whole, as Kafka does when its
		// offsets topic cannot be written.
		resp.ErrorCode = offsets.ErrorCode(err)
		resp.Topics = nil
	}
	return resp, nil
}
