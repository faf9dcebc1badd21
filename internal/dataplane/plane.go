package dataplane

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/loglimit"
	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
	"github.com/iggygw/iggy-gateway-kafka/internal/tailcache"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicstate"
)

// Storage is what the data plane needs of Iggy: topics and the messages in their partitions.
// *iggy.Client implements it.
type Storage interface {
	GetTopic(ctx context.Context, stream, topic iggy.Identifier) (*iggy.Topic, error)
	SendBatch(ctx context.Context, stream, topic iggy.Identifier, partition uint32, b *iggy.Batch) (iggy.SendConfirmation, error)
	PollMessages(ctx context.Context, req iggy.PollRequest) (*iggy.Polled, error)
}

var _ Storage = (*iggy.Client)(nil)

// Options configure a Plane.
type Options struct {
	Config *config.Config
	// Storage is the bridge's Iggy; nil when the bridge is off (every partition is then
	// answered NOT_LEADER_OR_FOLLOWER, nothing may look stored).
	Storage Storage
	// Topics resolves Kafka topics to Iggy topics; required with Storage.
	Topics *topicmap.Cache
	// Placement says which gateway leads each partition (nil: this one leads all).
	Placement placement.Placement
	// TopicState holds the topic configs the data path honours and DeleteRecords' log start
	// offsets; nil: none (DeleteRecords is refused).
	TopicState *topicstate.Store
	// Epochs is the leader-epoch log (nil: epochs kept in memory only); LoadEpochs reads it.
	Epochs EpochLog
	// OnTruncation, if set, is called for each partition truncation detected (a metrics hook).
	OnTruncation func()
	// Observer learns the records produced and fetched per topic (nil: nobody).
	Observer DataObserver
	Logger   *slog.Logger
	// LogLimiter rate-limits the log lines a request can cause once per partition (nil: not
	// limited).
	LogLimiter *loglimit.Limiter
}

// Plane is the gateway's data plane: the partition state, the write path (Produce and its
// lanes, idempotence), the read path (Fetch from the tail cache, then Iggy polls;
// ListOffsets), leader epochs and truncation. Iggy stays the source of truth; the Plane only
// decides when to read and how much to ask for. Its methods are safe for concurrent use.
type Plane struct {
	cfg       *config.Config
	iggy      Storage // nil without the bridge
	log       *slog.Logger
	logLimit  *loglimit.Limiter
	topics    *topicmap.Cache
	placement placement.Placement
	state     *topicstate.Store

	data   partitions       // partition state, produce lanes, fetch probes (partitions.go)
	idem   producerStates   // idempotent producers' state per partition (idempotence.go)
	reader partitionReader  // Fetch's reads of stored messages (fetch.go)
	tail   *tailcache.Cache // recently written batches (tail.go); nil when off
	epochs leaderEpochs     // per-partition leader epochs (epochs.go)
	txns   txnParts         // transactions: the coordinator and per-partition state (txn.go)

	onTruncation func()
	truncCheck   truncationCheck // checks after Iggy reconnects (truncation.go)
	observer     DataObserver

	// draining is closed by BeginShutdown: waiting fetches answer at once.
	draining  chan struct{}
	drainOnce sync.Once

	// background are the Plane's own goroutines (topic probes, partitions.go), which Close
	// stops (closing stopped) and waits for (issue 25: every long-lived goroutine has an
	// owner). closed, guarded by data.mu, keeps new ones from starting once Close began.
	background sync.WaitGroup
	stopped    chan struct{}
	closed     bool
}

// New returns a Plane.
func New(opts Options) *Plane {
	cfg := opts.Config
	dp := &Plane{
		cfg:          cfg,
		iggy:         opts.Storage,
		log:          opts.Logger,
		logLimit:     opts.LogLimiter,
		topics:       opts.Topics,
		placement:    opts.Placement,
		state:        opts.TopicState,
		idem:         newProducerStates(cfg.IdempotentProducers, cfg.ProducerExpiry, cfg.ProducerRebuildMessages),
		tail:         tailcache.New(cfg.TailCacheBytes),
		onTruncation: opts.OnTruncation,
		observer:     opts.Observer,
		draining:     make(chan struct{}),
		stopped:      make(chan struct{}),
	}
	if dp.log == nil {
		dp.log = slog.Default()
	}
	if dp.observer == nil {
		dp.observer = nopDataObserver{}
	}
	if dp.placement == nil {
		dp.placement = placement.Single{NodeID: int32(cfg.NodeID)}
	}
	dp.reader = iggyReader{dp}
	dp.epochs.log = opts.Epochs
	return dp
}

// BeginShutdown answers waiting fetches at once rather than hold up the drain.
func (dp *Plane) BeginShutdown() { dp.drainOnce.Do(func() { close(dp.draining) }) }

// Close ends the Plane's background work (topic probes, truncation checks after Iggy
// reconnects) and waits for it. Call it before the Iggy client is closed. Calling it again
// does nothing.
func (dp *Plane) Close() {
	dp.BeginShutdown()
	dp.data.mu.Lock()
	first := !dp.closed
	dp.closed = true
	dp.data.mu.Unlock()
	if first {
		close(dp.stopped)
	}
	dp.background.Wait()
	dp.StopTruncationChecks()
}

// bridgeOff reports whether requests must get storage-free answers.
func (dp *Plane) bridgeOff() bool { return dp.iggy == nil }

// storage is the Iggy a request of connection cc reaches Iggy through (nil cc: the gateway's
// own reads). Every client shares the gateway's Iggy connections (the bridge account): what an
// identified principal may do is decided before the data plane is asked (internal/broker).
func (dp *Plane) storage(*listener.ConnContext) Storage { return dp.iggy }

// leads reports whether this gateway leads the partition (docs/DEPLOYMENT.md).
func (dp *Plane) leads(topic string, partition int32) bool {
	return dp.placement.Leader(topic, partition) == int32(dp.cfg.NodeID)
}

// refuseNotLedFetch answers NOT_LEADER_OR_FOLLOWER for every partition of f this gateway
// does not lead; they are not read.
func (dp *Plane) refuseNotLedFetch(f *fetchRequest) {
	for _, t := range f.topics {
		for i := t.start; i < t.end; i++ {
			if fp := &f.parts[i]; !fp.final && !dp.leads(t.kafka, fp.out.Partition) {
				fp.fail(kerr.NotLeaderForPartition.Code)
			}
		}
	}
}

// logEntry logs a per-entry line through the rate limiter.
func (dp *Plane) logEntry(level slog.Level, kind, msg string, args ...any) {
	dp.logLimit.Log(dp.log, level, kind, msg, args...)
}

// warnIggy logs a failed Iggy call of a request, unless the request's client went away (its
// context was cancelled): a fetch cancelled because its connection closed is no failure.
func (dp *Plane) warnIggy(ctx context.Context, msg string, args ...any) {
	if errors.Is(ctx.Err(), context.Canceled) {
		dp.log.Debug(msg, args...)
		return
	}
	dp.log.Warn(msg, args...)
}

// Kinds of the log lines one request can cause once per partition or topic: each is
// rate-limited on its own (Options.LogLimiter), so a request naming millions of entries
// cannot flood the log; what is suppressed is counted in /metrics (docs/LIMITS.md).
const (
	logProduceRefused    = "produce_partition_refused"
	logProduceLookup     = "produce_topic_lookup_failed"
	logProduceSend       = "produce_send_failed"
	logIdempotentRefused = "produce_idempotent_refused"
	logFetchRead         = "fetch_read_failed"
	logListOffsetsRead   = "list_offsets_read_failed"
	logEpochRead         = "offsets_for_leader_epoch_read_failed"
	logDeleteRecordsRead = "delete_records_read_failed"
	logPartitionPanic    = "partition_panic"
)

// readTopic reads the Iggy topic behind a Kafka topic that a per-partition request
// (ListOffsets, OffsetForLeaderEpoch, DeleteRecords) names, or returns instead the error code
// to answer each of its partitions with: NOT_LEADER_OR_FOLLOWER without the bridge,
// UNKNOWN_TOPIC_OR_PARTITION for an invalid name or a missing topic (whose cached resolution
// is dropped), the read's own error otherwise, logged as logKind ("<what>: topic read failed").
func (dp *Plane) readTopic(ctx context.Context, cc *listener.ConnContext, kafkaTopic, logKind, what string) (topicmap.Target, *iggy.Topic, int16) {
	if dp.bridgeOff() {
		return topicmap.Target{}, nil, kerr.NotLeaderForPartition.Code
	}
	if topicmap.ValidateKafkaName(kafkaTopic) != nil {
		return topicmap.Target{}, nil, kerr.UnknownTopicOrPartition.Code
	}
	target := dp.topics.Map().Resolve(kafkaTopic)
	topic, err := dp.storage(cc).GetTopic(ctx, iggy.Name(target.Stream), iggy.Name(target.Topic))
	if err != nil {
		code := kafkacode.ForData(err, false)
		if kafkacode.IsNotFound(err) {
			dp.topics.Invalidate(kafkaTopic)
		} else {
			dp.logEntry(slog.LevelWarn, logKind, what+": topic read failed", "conn", cc.ID, "topic", kafkaTopic, "kafka_error", code, "err", err)
		}
		return target, nil, code
	}
	dp.noteTopicOf(target, topic)
	return target, topic, 0
}

// LeaderEpoch is the current leader epoch of a partition, as Metadata reports it.
func (dp *Plane) LeaderEpoch(t topicmap.Target, partition uint32) int32 {
	return dp.epochs.current(partKey{Target: t, Partition: partition})
}

// TopicDeleted forgets what the data plane kept of a topic Kafka's DeleteTopics removed: its
// cached batches always (the topic may be gone even when the delete failed), its partition
// and producer state when Iggy confirmed the delete (deleted): a topic created under its name
// starts afresh.
func (dp *Plane) TopicDeleted(t topicmap.Target, deleted bool) {
	dp.tail.InvalidateTopic(t.Stream, t.Topic)
	if deleted {
		dp.data.dropTopic(t)
		dp.idem.dropTopic(t)
		dp.txns.dropTopic(partKey{Target: t})
	}
}
