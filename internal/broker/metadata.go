package broker

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

func init() {
	// Metadata has no error field before v13: an undecodable request closes the connection.
	// Concurrent: auto-creation is idempotent, and only other concurrent requests may overlap.
	register(kmsg.Metadata, route{serve: typed((*Broker).metadata), concurrent: true, normalize: normalizeMetadata})
}

// normalizeMetadata states what the version implies: at v0 an empty topic list asks for all
// topics (null from v1), and below v4 every request allows auto-creation (the field came
// with v4). The authorization rule narrows these fields (internal/authorize)
// and the handler honours them, at every version.
func normalizeMetadata(r kmsg.Request) {
	req := r.(*kmsg.MetadataRequest)
	if req.Version == 0 && len(req.Topics) == 0 {
		req.Topics = nil
	}
	if req.Version < 4 {
		req.AllowAutoTopicCreation = true
	}
}

// metadata lists the brokers, the controller and partition leaders as the placement says
// (this gateway alone, by default), and the topics the client asked for (all visible topics
// for a null list; normalizeMetadata has made a v0 empty list null).
func (b *Broker) metadata(ctx context.Context, cc *listener.ConnContext, req *kmsg.MetadataRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	for _, n := range b.placement.Brokers(cc.Listener) {
		br := kmsg.NewMetadataResponseBroker()
		br.NodeID, br.Host, br.Port = n.ID, n.Host, n.Port
		resp.Brokers = append(resp.Brokers, br)
	}
	resp.ClusterID = &b.clusterID
	resp.ControllerID = b.placement.Controller()

	if req.Topics == nil {
		topics, err := b.allTopics(ctx, cc)
		if err != nil {
			// No error field to report it in, and an empty list would tell clients every topic
			// is gone: close, the client reconnects and asks again.
			return nil, fmt.Errorf("list topics: %w", err)
		}
		resp.Topics = topics
		return resp, nil
	}
	autoCreate := b.cfg.AutoCreateTopics && req.AllowAutoTopicCreation
	seen := make(map[string]bool, len(req.Topics))
	var byID map[[16]byte]string // loaded at the first lookup by id
	for _, rt := range req.Topics {
		var t kmsg.MetadataResponseTopic
		switch {
		case rt.Topic == nil:
			t = b.describeTopicByID(ctx, cc, rt.TopicID, &byID)
		case seen[*rt.Topic]:
			continue // answered once, as Kafka does
		default:
			seen[*rt.Topic] = true
			t = b.describeTopic(ctx, cc, *rt.Topic, autoCreate)
		}
		// A topic's partitions can be many times its name: the answer grows inside the
		// request memory budget (docs/LIMITS.md).
		if err := listener.ReserveAnswer(ctx, t); err != nil {
			return nil, err
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp, nil
}

// describeTopicByID answers a lookup by topic id (v10+), which consumer-protocol clients make
// for the topics their assignment names by id. Ids are derived from the topics
// (topicmap.Resolved.KafkaID), so the topics are listed (once per request, into byID) to find
// the name; an id no topic has is UNKNOWN_TOPIC_ID.
func (b *Broker) describeTopicByID(ctx context.Context, cc *listener.ConnContext, id [16]byte, byID *map[[16]byte]string) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.TopicID = id
	t.ErrorCode = kerr.UnknownTopicID.Code
	if b.bridgeOff() {
		return t
	}
	if *byID == nil {
		all, err := groupTopics{b: b, cc: cc}.All(ctx)
		if err != nil {
			t.ErrorCode = kafkacode.ForTopic(err)
			b.logEntry(slog.LevelWarn, logMetadataLookup, "metadata: listing topics for a lookup by id failed", "conn", cc.ID, "kafka_error", t.ErrorCode, "err", err)
			return t
		}
		*byID = make(map[[16]byte]string, len(all))
		for name, md := range all {
			(*byID)[md.ID] = name
		}
	}
	name, ok := (*byID)[id]
	if !ok {
		return t
	}
	if d := b.describeTopic(ctx, cc, name, false); d.ErrorCode == 0 && d.TopicID == id {
		return d
	}
	return t // gone or recreated since the listing
}

// describeTopic resolves one named topic, creating it when allowed.
func (b *Broker) describeTopic(ctx context.Context, cc *listener.ConnContext, name string, autoCreate bool) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.Topic = &name
	if err := topicmap.ValidateKafkaName(name); err != nil {
		t.ErrorCode = kerr.InvalidTopicException.Code
		return t
	}
	if b.bridgeOff() {
		t.ErrorCode = kerr.UnknownTopicOrPartition.Code
		return t
	}
	r, err := b.topics.Resolve(ctx, name)
	if kafkacode.IsNotFound(err) && autoCreate {
		r, err = b.createTopic(ctx, cc, name, uint32(b.cfg.AutoCreatePartitions), iggy.TopicOptions{})
	}
	if err != nil {
		t.ErrorCode = kafkacode.ForTopic(err)
		if !kafkacode.IsNotFound(err) {
			b.logEntry(slog.LevelWarn, logMetadataLookup, "metadata: topic lookup failed", "conn", cc.ID, "topic", name, "kafka_error", t.ErrorCode, "err", err)
		}
		return t
	}
	t.TopicID = r.KafkaID()
	t.Partitions = b.partitionsMetadata(cc, name, r.Partitions)
	return t
}

// allTopics lists every Iggy topic that a Kafka name resolves to, in the default stream and
// the streams of the topic map. Missing streams list nothing.
func (b *Broker) allTopics(ctx context.Context, cc *listener.ConnContext) ([]kmsg.MetadataResponseTopic, error) {
	if b.bridgeOff() {
		return nil, nil
	}
	m := b.topics.Map()
	var out []kmsg.MetadataResponseTopic
	for _, stream := range m.Streams() {
		topics, err := b.storage(cc).GetTopics(ctx, iggy.Name(stream))
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
			b.topics.Store(r)
			t := kmsg.NewMetadataResponseTopic()
			t.Topic = &name
			t.TopicID = r.KafkaID()
			t.Partitions = b.partitionsMetadata(cc, name, it.PartitionsCount)
			if err := listener.ReserveAnswer(ctx, t); err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(x, y kmsg.MetadataResponseTopic) int { return cmp.Compare(*x.Topic, *y.Topic) })
	return out, nil
}

// partitionsMetadata describes the n partitions of a topic: each with its leader, its
// replicas (replicasOf) and its leader epoch (internal/dataplane; -1 without the bridge, which
// makes clients skip epoch validation).
func (b *Broker) partitionsMetadata(cc *listener.ConnContext, topic string, n uint32) []kmsg.MetadataResponseTopicPartition {
	out := make([]kmsg.MetadataResponseTopicPartition, n)
	brokers, copies := b.placement.Brokers(cc.Listener), b.iggyCopies()
	var target topicmap.Target
	if !b.bridgeOff() {
		target = b.topics.Map().Resolve(topic)
	}
	for i := range out {
		leader := b.placement.Leader(topic, int32(i))
		p := kmsg.NewMetadataResponseTopicPartition()
		p.Partition = int32(i)
		p.Leader = leader
		p.LeaderEpoch = -1
		if !b.bridgeOff() {
			p.LeaderEpoch = b.data.LeaderEpoch(target, uint32(i))
		}
		p.Replicas = replicasOf(leader, brokers, copies)
		p.ISR = p.Replicas
		out[i] = p
	}
	return out
}

// replicasOf is a partition's replica list as Kafka tools read it: its leader, then other
// gateways, as many in all as Iggy holds copies of the partition and at most every gateway
// (replica ids must name brokers). In the deployment of a gateway beside each Iggy node, each
// listed gateway stands for the node beside it (docs/DEPLOYMENT.md, "Replication as Kafka
// tools see it"). Iggy commits a write on a quorum of its nodes before the gateway answers, so
// every listed replica is in sync.
func replicasOf(leader int32, brokers []placement.Node, copies int) []int32 {
	out := make([]int32, 1, max(1, min(copies, len(brokers))))
	out[0] = leader
	for _, n := range brokers {
		if len(out) == cap(out) {
			break
		}
		if n.ID != leader {
			out = append(out, n.ID)
		}
	}
	return out
}

// iggyCopies is how many Iggy nodes hold every partition: the cluster's size (Iggy replicates
// every partition to every node), 1 for a single node or without the bridge.
func (b *Broker) iggyCopies() int {
	if b.iggyNodes == nil {
		return 1
	}
	return max(1, b.iggyNodes())
}
