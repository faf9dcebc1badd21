package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkareq"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

func init() {
	// Errors are per topic only: an undecodable request closes the connection.
	register(kmsg.CreatePartitions, route{serve: typed((*Broker).createPartitions)})
}

// createPartitions raises each topic's partition count to the requested total (Iggy adds
// partitions with the next ids). A total that is not an increase is INVALID_PARTITIONS, as in
// Kafka. Manual assignments must name this gateway as the only replica of each new partition.
func (b *Broker) createPartitions(ctx context.Context, cc *listener.ConnContext, req *kmsg.CreatePartitionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	ctx, cancel := kafkareq.Context(ctx, req.TimeoutMillis)
	defer cancel()
	reps := findRepeats(len(req.Topics), func(i int) string { return req.Topics[i].Topic })
	for i := range req.Topics {
		rt := &req.Topics[i]
		var err *apiError
		switch reps.of(rt.Topic) {
		case laterRepeat:
			continue
		case firstRepeat:
			err = newAPIError(kerr.InvalidRequest, "topic %q appears more than once in the request", rt.Topic)
		default:
			err = b.addPartitions(ctx, cc, rt, req.ValidateOnly)
		}
		res := kmsg.NewCreatePartitionsResponseTopic()
		res.Topic = rt.Topic
		res.ErrorCode, res.ErrorMessage = err.fields()
		resp.Topics = append(resp.Topics, res)
	}
	return resp, nil
}

func (b *Broker) addPartitions(ctx context.Context, cc *listener.ConnContext, rt *kmsg.CreatePartitionsRequestTopic, validateOnly bool) *apiError {
	if err := b.controllerRefusal(); err != nil {
		return err
	}
	if topicmap.ValidateKafkaName(rt.Topic) != nil {
		return newAPIError(kerr.UnknownTopicOrPartition, "topic %q does not exist", rt.Topic)
	}
	// Read the count and add to it without another change of this gateway to the topic in
	// between.
	t := b.topics.Map().Resolve(rt.Topic)
	unlock, err := b.adminLocks.Lock(ctx, t)
	if err != nil {
		return b.logAdminError(cc, "create partitions", rt.Topic, err)
	}
	defer unlock()
	topic, err := b.storage(cc).GetTopic(ctx, iggy.Name(t.Stream), iggy.Name(t.Topic))
	if err != nil {
		return b.logAdminError(cc, "create partitions", rt.Topic, err)
	}
	current := int64(topic.PartitionsCount)
	want := int64(rt.Count)
	switch {
	case want == current:
		return newAPIError(kerr.InvalidPartitions, "topic %q already has %d partitions", rt.Topic, current)
	case want < current:
		return newAPIError(kerr.InvalidPartitions, "topic %q has %d partitions; %d would not be an increase (partitions cannot be removed)", rt.Topic, current, want)
	case want > maxTopicPartitions:
		return newAPIError(kerr.InvalidPartitions, "%d partitions requested: an Iggy topic has at most %d", want, maxTopicPartitions)
	}
	added := want - current
	if rt.Assignment != nil {
		if int64(len(rt.Assignment)) != added {
			return newAPIError(kerr.InvalidReplicaAssignment, "attempted to add %d partitions, but %d assignments were given", added, len(rt.Assignment))
		}
		for i, a := range rt.Assignment {
			if err := b.checkReplicas(int32(current)+int32(i), a.Replicas); err != nil {
				return err
			}
		}
	}
	if validateOnly {
		return nil
	}
	err = b.storage(cc).CreatePartitions(ctx, iggy.Name(t.Stream), iggy.Name(t.Topic), uint32(added))
	b.topics.Invalidate(rt.Topic)
	if err != nil {
		return b.logAdminError(cc, "create partitions", rt.Topic, err)
	}
	b.log.Info("added partitions", "conn", cc.ID, "topic", rt.Topic, "from", current, "to", want)
	return nil
}
