package broker

import (
	"context"
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkareq"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicstate"
)

func init() {
	// Errors are per topic only: an undecodable request closes the connection.
	register(kmsg.CreateTopics, route{serve: typed((*Broker).createTopics)})
}

// createTopics creates the Iggy topic behind each Kafka topic (and the stream when missing),
// checking what Kafka checks, in Kafka's order: a repeated name, the name, existence, configs,
// then partitions, replication factor and manual assignments. validate_only runs every check
// and creates nothing.
func (b *Broker) createTopics(ctx context.Context, cc *listener.ConnContext, req *kmsg.CreateTopicsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	ctx, cancel := kafkareq.Context(ctx, req.TimeoutMillis)
	defer cancel()
	reps := findRepeats(len(req.Topics), func(i int) string { return req.Topics[i].Topic })
	for i := range req.Topics {
		rt := &req.Topics[i]
		switch reps.of(rt.Topic) {
		case laterRepeat:
		case firstRepeat:
			resp.Topics = append(resp.Topics, createTopicsResult(rt.Topic, newAPIError(kerr.InvalidRequest, "topic %q appears more than once in the request", rt.Topic)))
		default:
			resp.Topics = append(resp.Topics, b.createOneTopic(ctx, cc, rt, req.ValidateOnly))
		}
	}
	return resp, nil
}

func createTopicsResult(topic string, err *apiError) kmsg.CreateTopicsResponseTopic {
	t := kmsg.NewCreateTopicsResponseTopic()
	t.Topic = topic
	t.ErrorCode, t.ErrorMessage = err.fields()
	return t
}

func (b *Broker) createOneTopic(ctx context.Context, cc *listener.ConnContext, rt *kmsg.CreateTopicsRequestTopic, validateOnly bool) kmsg.CreateTopicsResponseTopic {
	if err := b.controllerRefusal(); err != nil {
		return createTopicsResult(rt.Topic, err)
	}
	if err := topicmap.ValidateKafkaName(rt.Topic); err != nil {
		return createTopicsResult(rt.Topic, newAPIError(kerr.InvalidTopicException, "%v", err))
	}
	t := b.topics.Map().Resolve(rt.Topic)
	_, err := b.storage(cc).GetTopic(ctx, iggy.Name(t.Stream), iggy.Name(t.Topic))
	switch {
	case err == nil:
		return createTopicsResult(rt.Topic, newAPIError(kerr.TopicAlreadyExists, "topic %q already exists", rt.Topic))
	case !kafkacode.IsNotFound(err):
		return createTopicsResult(rt.Topic, b.logAdminError(cc, "create topic", rt.Topic, err))
	}
	partitions, change, aerr := b.newTopicPlan(rt)
	if aerr != nil {
		return createTopicsResult(rt.Topic, aerr)
	}
	flush, aerr := b.topicFlushMode(rt.Configs)
	if aerr != nil {
		return createTopicsResult(rt.Topic, aerr)
	}
	ret, stored := change.apply(defaultRetention), change.stored.apply(nil)
	if aerr := checkCombination(ret, stored); aerr != nil {
		return createTopicsResult(rt.Topic, aerr)
	}
	if len(stored) > 0 && b.state == nil {
		return createTopicsResult(rt.Topic, b.saveStoredConfigs(ctx, rt.Topic, 0, stored))
	}
	if !validateOnly {
		r, err := b.createNewTopic(ctx, cc, rt.Topic, partitions, withFlush(change.options(), flush))
		if err != nil {
			return createTopicsResult(rt.Topic, b.logAdminError(cc, "create topic", rt.Topic, err))
		}
		if aerr := b.initTopicState(ctx, cc, r, stored); aerr != nil {
			return createTopicsResult(rt.Topic, aerr)
		}
	}
	res := createTopicsResult(rt.Topic, nil)
	res.NumPartitions = int32(partitions)
	res.ReplicationFactor = int16(b.iggyCopies()) // every Iggy node holds every partition
	for _, e := range b.withFlushEntries(b.allTopicEntries(ret, stored), plannedFlush(flush)) {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name, c.Value, c.ReadOnly, c.Source = e.name, kmsg.StringPtr(e.value), e.readOnly, int8(e.source)
		res.Configs = append(res.Configs, c)
	}
	return res
}

// initTopicState stores the configs of a topic just created, after forgetting what was stored
// for an earlier topic of the same name (Iggy may give a recreated topic the old id). When
// that fails the topic is deleted again, so that the client's retry can create it.
func (b *Broker) initTopicState(ctx context.Context, cc *listener.ConnContext, r topicmap.Resolved, stored map[string]string) *apiError {
	if b.state == nil {
		return nil
	}
	old := b.state.Cached(r.Kafka, r.TopicID)
	err := b.state.Forget(ctx, r.Kafka)
	if err == nil && (len(stored) > 0 || len(old.Configs) > 0) {
		err = b.state.SetConfigs(ctx, r.Kafka, r.TopicID, stored)
	}
	if err == nil {
		return nil
	}
	b.log.Warn("storing the configs of a new topic failed; deleting the topic", "conn", cc.ID, "topic", r.Kafka, "err", err)
	if derr := b.storage(cc).DeleteTopic(ctx, iggy.Name(r.Target.Stream), iggy.Name(r.Target.Topic)); derr != nil {
		b.log.Warn("deleting the topic after a failed config store failed", "conn", cc.ID, "topic", r.Kafka, "err", derr)
	}
	b.topics.Invalidate(r.Kafka)
	if errors.Is(err, topicstate.ErrSuperseded) { // another gateway became the controller
		return newAPIError(kerr.NotController, "this gateway is no longer the controller: %v", err)
	}
	return newAPIError(kerr.RequestTimedOut, "storing the topic configs failed: %v", err)
}

// newTopicPlan checks the configs, partition count, replication factor and manual
// assignments of a topic to create, and returns its partition count and configs.
func (b *Broker) newTopicPlan(rt *kmsg.CreateTopicsRequestTopic) (uint32, topicChange, *apiError) {
	var ret topicChange
	var nulls []string
	for _, c := range rt.Configs {
		if c.Value == nil {
			nulls = append(nulls, c.Name)
		}
	}
	if len(nulls) > 0 {
		return 0, ret, newAPIError(kerr.InvalidConfig, "null value not supported for topic configs: %s", strings.Join(nulls, ","))
	}
	for _, c := range rt.Configs {
		if isFlushConfig(c.Name) {
			continue // topicFlushMode
		}
		if err := ret.set(c.Name, *c.Value); err != nil {
			return 0, ret, err
		}
	}
	if len(rt.ReplicaAssignment) > 0 {
		n, err := b.checkAssignments(rt)
		return n, ret, err
	}
	switch rf := rt.ReplicationFactor; {
	case rf == 0 || rf < -1:
		return 0, ret, newAPIError(kerr.InvalidReplicationFactor, "replication factor must be larger than 0, or -1 to use the default")
	case int(rf) > b.iggyCopies():
		return 0, ret, newAPIError(kerr.InvalidReplicationFactor, "replication factor %d is larger than the %d Iggy node(s) behind the gateway: Iggy replicates every partition to every node of its cluster, so use 1 to %d, or -1", rf, b.iggyCopies(), b.iggyCopies())
	}
	switch n := rt.NumPartitions; {
	case n == -1:
		return uint32(b.cfg.AutoCreatePartitions), ret, nil
	case n == 0 || n < -1:
		return 0, ret, newAPIError(kerr.InvalidPartitions, "number of partitions must be larger than 0, or -1 to use the default")
	case n > maxTopicPartitions:
		return 0, ret, newAPIError(kerr.InvalidPartitions, "%d partitions requested: an Iggy topic has at most %d", n, maxTopicPartitions)
	default:
		return uint32(n), ret, nil
	}
}

// checkAssignments validates a manual assignment, which must cover partitions 0..n-1 once
// each with this gateway as the only replica, and returns n.
func (b *Broker) checkAssignments(rt *kmsg.CreateTopicsRequestTopic) (uint32, *apiError) {
	if rt.ReplicationFactor != -1 {
		return 0, newAPIError(kerr.InvalidRequest, "a manual partition assignment was given, but the replication factor is not -1")
	}
	if rt.NumPartitions != -1 {
		return 0, newAPIError(kerr.InvalidRequest, "a manual partition assignment was given, but the number of partitions is not -1")
	}
	n := len(rt.ReplicaAssignment)
	if n > maxTopicPartitions {
		return 0, newAPIError(kerr.InvalidPartitions, "%d partitions assigned: an Iggy topic has at most %d", n, maxTopicPartitions)
	}
	seen := make([]bool, n)
	for _, a := range rt.ReplicaAssignment {
		if a.Partition >= 0 && int(a.Partition) < n && seen[a.Partition] {
			return 0, newAPIError(kerr.InvalidReplicaAssignment, "partition %d is assigned more than once", a.Partition)
		}
		if err := b.checkReplicas(a.Partition, a.Replicas); err != nil {
			return 0, err
		}
		if a.Partition < 0 || int(a.Partition) >= n {
			return 0, newAPIError(kerr.InvalidReplicaAssignment, "partitions must be numbered 0 to %d in a manual assignment of %d partitions; got %d", n-1, n, a.Partition)
		}
		seen[a.Partition] = true
	}
	return uint32(n), nil
}
