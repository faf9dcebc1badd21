package broker

import (
	"context"
	"errors"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// groupState is the consumer-group side of the Broker: the classic group coordinator and the
// committed-offset store behind it.
type groupState struct {
	coordinator *groups.Coordinator
	// offsets is nil without the bridge: the offset APIs then answer
	// COORDINATOR_LOAD_IN_PROGRESS and membership lives in memory only.
	offsets *offsets.Store
	// released is done once the gateway begins to shut down (BeginShutdown): it ends every
	// JoinGroup and SyncGroup parked in a rebalance.
	released context.Context
	release  context.CancelFunc
}

// newGroupState builds the coordinator over the offset store (which the caller has loaded).
// Stored stays unset without a store: a typed nil would make the coordinator call into it.
func newGroupState(opts Options) (groupState, error) {
	if opts.Offsets != nil && opts.Iggy == nil {
		return groupState{}, errors.New("broker: an offset store needs the bridge (Options.Iggy)")
	}
	cfg := groups.DefaultConfig()
	if opts.Groups != nil {
		cfg = *opts.Groups
	}
	cfg.Logger = opts.Logger
	if opts.Offsets != nil {
		cfg.Stored = opts.Offsets
		cfg.OnGeneration = opts.Offsets.OnGeneration
	}
	c, err := groups.New(cfg)
	if err != nil {
		return groupState{}, err
	}
	released, release := context.WithCancel(context.Background())
	return groupState{coordinator: c, offsets: opts.Offsets, released: released, release: release}, nil
}

// BeginShutdown answers the requests that wait on the gateway, so that draining connections do
// not hold up the shutdown: JoinGroup and SyncGroup requests parked in a rebalance (and every
// later one) get COORDINATOR_NOT_AVAILABLE, after which clients look for the coordinator again;
// long-polling fetches answer with what they have. Call it when the gateway starts shutting
// down.
func (b *Broker) BeginShutdown() {
	b.groups.release()
	b.data.BeginShutdown()
}

// Close stops what the broker runs in the background, and waits for it: the group
// coordinator's timers and the data plane's truncation checks. Call it once the listeners have
// drained, before the Iggy client is closed.
func (b *Broker) Close() {
	b.groups.coordinator.Close()
	b.data.Close()
}

// rebalanceContext is the context a JoinGroup or SyncGroup waits under: the connection's
// lifetime (a barrier can last the whole rebalance timeout, so never a request deadline),
// ended early by BeginShutdown.
func (b *Broker) rebalanceContext(conn context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(conn)
	stop := context.AfterFunc(b.groups.released, cancel)
	return ctx, func() { stop(); cancel() }
}

// groupClient identifies the connection to the coordinator, reported per member by
// DescribeGroups: the client id and the peer address in Kafka's "/host" form.
func groupClient(cc *listener.ConnContext) groups.Client {
	host := ""
	if cc.RemoteAddr != nil {
		host = cc.RemoteAddr.String()
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = "/" + host
	}
	return groups.Client{ID: cc.ClientID(), Host: host}
}

// offsetsUnavailable is the answer of the offset APIs while nothing can be stored (bridge
// off; docs/DATA-PATH.md): retriable, and nothing looks stored.
var offsetsUnavailable = kerr.CoordinatorLoadInProgress

// offsetTopics checks the partitions named by one offset request against Iggy. Kafka refuses
// commits to partitions it does not host (UNKNOWN_TOPIC_OR_PARTITION); when Iggy cannot tell,
// the answer is retriable (COORDINATOR_LOAD_IN_PROGRESS), never a refusal that a client would
// treat as final. Each topic is looked up once per request however often it is named.
type offsetTopics struct {
	b    *Broker
	ctx  context.Context
	seen map[string]topicCheck
}

type topicCheck struct {
	partitions int32
	code       int16
}

func (b *Broker) offsetTopics(ctx context.Context) *offsetTopics {
	return &offsetTopics{b: b, ctx: ctx, seen: make(map[string]topicCheck)}
}

// code is the error code for topic/partition, 0 when the partition exists.
func (o *offsetTopics) code(topic string, partition int32) int16 {
	c, ok := o.seen[topic]
	if !ok {
		c = o.lookup(topic)
		o.seen[topic] = c
	}
	if c.code == 0 && (partition < 0 || partition >= c.partitions) {
		return kerr.UnknownTopicOrPartition.Code
	}
	return c.code
}

func (o *offsetTopics) lookup(topic string) topicCheck {
	if topicmap.ValidateKafkaName(topic) != nil {
		return topicCheck{code: kerr.UnknownTopicOrPartition.Code} // no such topic can exist
	}
	r, err := o.b.topics.Resolve(o.ctx, topic)
	switch {
	case err == nil:
		return topicCheck{partitions: int32(r.Partitions)}
	case kafkacode.IsNotFound(err):
		return topicCheck{code: kerr.UnknownTopicOrPartition.Code}
	case kafkacode.IsUnauthorized(err):
		return topicCheck{code: kerr.TopicAuthorizationFailed.Code}
	default:
		code := kafkacode.Of(err, kafkacode.Groups)
		o.b.log.Warn("offset API: resolving topic failed", "topic", topic, "kafka_error", code, "err", err)
		return topicCheck{code: code}
	}
}
