package broker

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicstate"
)

// Stored topic configs are the Kafka topic configs Iggy has no option for. The gateway keeps
// them in the topic-state log (internal/topicstate), so they survive restarts and read the
// same on every gateway. Some are honoured by the gateway (cleanup.policy, max.message.bytes,
// message.timestamp.type, compression.type); the others are accepted: stored and reported
// back exactly, with no effect on Iggy (docs/TOPIC-CONFIGS.md says why for each).
const (
	configMaxMessageBytes = topicstate.ConfigMaxMessageBytes
	configTimestampType   = topicstate.ConfigTimestampType
	configCompressionType = "compression.type"

	cleanupPolicyCompact = "compact"
	timestampCreateTime  = "CreateTime"
	timestampAppendTime  = topicstate.TimestampAppendTime
	compressionProducer  = "producer"
	compressionNone      = "uncompressed"
)

// storedConfig describes one stored config.
type storedConfig struct {
	typ kmsg.ConfigType
	// brokerName is the broker config Kafka falls back to (its synonym).
	brokerName string
	// def is the value in force when the topic sets none; defFor computes it instead when set.
	def    string
	defFor func(*Broker) string
	// check validates a value and returns it as stored (list items trimmed).
	check func(name, value string) (string, *apiError)
	doc   string
}

func (c *storedConfig) defaultValue(b *Broker) string {
	if c.defFor != nil {
		return c.defFor(b)
	}
	return c.def
}

// storedConfigs is every stored config by name.
var storedConfigs = map[string]*storedConfig{
	configCleanupPolicy: {typ: kmsg.ConfigTypeList, brokerName: brokerCleanupPolicy, def: cleanupPolicyDelete, check: checkCleanupPolicy,
		doc: "Honoured. delete: Iggy removes whole old segments by retention.ms/retention.bytes. compact: records are never deleted (no time or size retention); Iggy has no compaction, so every record is kept, which meets Kafka's contract that the latest record per key is kept (readers already cope with older ones), at a cost in space. compact,delete: kept until retention.ms/retention.bytes, like delete."},
	configMaxMessageBytes: {typ: kmsg.ConfigTypeInt, brokerName: "message.max.bytes", check: checkIntRange(0, math.MaxInt32),
		defFor: func(b *Broker) string { return strconv.Itoa(b.cfg.Limits.MaxFrameSize) },
		doc:    "Honoured: a produced record batch larger than this is refused with MESSAGE_TOO_LARGE. Without it the limit is the request frame limit (IGGY_KAFKA_MAX_FRAME_SIZE)."},
	configTimestampType: {typ: kmsg.ConfigTypeString, brokerName: "log.message.timestamp.type", def: timestampCreateTime, check: checkOneOf(timestampCreateTime, timestampAppendTime),
		doc: "Honoured on Fetch. CreateTime: the producer's timestamps. LogAppendTime: batches carry Iggy's append time of their records, with the batch's log-append-time attribute set."},
	configCompressionType: {typ: kmsg.ConfigTypeString, brokerName: configCompressionType, def: compressionProducer, check: checkCompression,
		doc: "Fetch always returns uncompressed batches (records are stored decompressed in Iggy): producer and uncompressed both mean that. Codecs are refused: the gateway does not recompress."},
	"segment.bytes": acceptedLong("log.segment.bytes", "1073741824", 14, math.MaxInt32, kmsg.ConfigTypeInt,
		"Accepted, no effect: Iggy's segment size is a setting of the Iggy server (1 GiB for the topics the gateway creates)."),
	"segment.ms": acceptedLong("log.roll.ms", "604800000", 1, math.MaxInt64, kmsg.ConfigTypeLong,
		"Accepted, no effect: Iggy does not roll segments by time."),
	"segment.jitter.ms": acceptedLong("log.roll.jitter.ms", "0", 0, math.MaxInt64, kmsg.ConfigTypeLong,
		"Accepted, no effect: Iggy does not roll segments by time."),
	"segment.index.bytes": acceptedLong("log.index.size.max.bytes", "10485760", 4, math.MaxInt32, kmsg.ConfigTypeInt,
		"Accepted, no effect: Iggy sizes its own indexes."),
	"index.interval.bytes": acceptedLong("log.index.interval.bytes", "4096", 0, math.MaxInt32, kmsg.ConfigTypeInt,
		"Accepted, no effect: Iggy indexes every message."),
	"min.insync.replicas": acceptedLong("min.insync.replicas", "1", 1, math.MaxInt32, kmsg.ConfigTypeInt,
		"Accepted, no effect: Kafka sees one replica; Iggy replicates by its own policy, and acks=all waits for Iggy's acknowledgement (docs/DURABILITY.md)."),
	"unclean.leader.election.enable": acceptedBool("unclean.leader.election.enable",
		"Accepted, no effect: there is no Kafka leader election; Iggy chooses partition leaders."),
	"min.compaction.lag.ms": acceptedLong("log.cleaner.min.compaction.lag.ms", "0", 0, math.MaxInt64, kmsg.ConfigTypeLong,
		"Accepted, no effect: nothing is compacted away, so every record is kept at least this long."),
	"max.compaction.lag.ms": acceptedLong("log.cleaner.max.compaction.lag.ms", "9223372036854775807", 1, math.MaxInt64, kmsg.ConfigTypeLong,
		"Accepted, no effect: nothing is compacted away."),
	"delete.retention.ms": acceptedLong("log.cleaner.delete.retention.ms", "86400000", 0, math.MaxInt64, kmsg.ConfigTypeLong,
		"Accepted, no effect: tombstones are kept like every other record."),
	"min.cleanable.dirty.ratio": {typ: kmsg.ConfigTypeDouble, brokerName: "log.cleaner.min.cleanable.ratio", def: "0.5", check: checkRatio,
		doc: "Accepted, no effect: there is no log cleaner."},
	"file.delete.delay.ms": acceptedLong("log.segment.delete.delay.ms", "60000", 0, math.MaxInt64, kmsg.ConfigTypeLong,
		"Accepted, no effect: Iggy deletes expired segments itself."),
	"preallocate": acceptedBool("log.preallocate",
		"Accepted, no effect: Iggy manages its segment files."),
	"message.timestamp.before.max.ms": acceptedLong("log.message.timestamp.before.max.ms", "9223372036854775807", 0, math.MaxInt64, kmsg.ConfigTypeLong,
		"Accepted, no effect: the gateway does not refuse records by timestamp."),
	"message.timestamp.after.max.ms": acceptedLong("log.message.timestamp.after.max.ms", "9223372036854775807", 0, math.MaxInt64, kmsg.ConfigTypeLong,
		"Accepted, no effect: the gateway does not refuse records by timestamp."),
	"leader.replication.throttled.replicas": acceptedList("leader.replication.throttled.replicas",
		"Accepted, no effect: Kafka replication does not exist on the gateway."),
	"follower.replication.throttled.replicas": acceptedList("follower.replication.throttled.replicas",
		"Accepted, no effect: Kafka replication does not exist on the gateway."),
}

func acceptedLong(brokerName, def string, lo, hi int64, typ kmsg.ConfigType, doc string) *storedConfig {
	return &storedConfig{typ: typ, brokerName: brokerName, def: def, check: checkIntRange(lo, hi), doc: doc}
}

func acceptedBool(brokerName, doc string) *storedConfig {
	return &storedConfig{typ: kmsg.ConfigTypeBoolean, brokerName: brokerName, def: "false", check: checkBool, doc: doc}
}

func acceptedList(brokerName, doc string) *storedConfig {
	return &storedConfig{typ: kmsg.ConfigTypeList, brokerName: brokerName, def: "", check: func(_, v string) (string, *apiError) { return strings.TrimSpace(v), nil }, doc: doc}
}

func checkIntRange(lo, hi int64) func(name, value string) (string, *apiError) {
	return func(name, value string) (string, *apiError) {
		n, err := parseKafkaLong(name, value)
		if err != nil {
			return "", err
		}
		if n < lo || n > hi {
			return "", newAPIError(kerr.InvalidConfig, "invalid value %s for configuration %s: want %d to %d", value, name, lo, hi)
		}
		return strconv.FormatInt(n, 10), nil
	}
}

func checkOneOf(values ...string) func(name, value string) (string, *apiError) {
	return func(name, value string) (string, *apiError) {
		v := strings.TrimSpace(value)
		if !slices.Contains(values, v) {
			return "", newAPIError(kerr.InvalidConfig, "invalid value %q for configuration %s: want one of %s (docs/TOPIC-CONFIGS.md)", value, name, strings.Join(values, ", "))
		}
		return v, nil
	}
}

// checkCompression accepts what Fetch does (uncompressed batches) and explains the refusal
// of a codec.
func checkCompression(name, value string) (string, *apiError) {
	v := strings.TrimSpace(value)
	if v != compressionProducer && v != compressionNone {
		return "", newAPIError(kerr.InvalidConfig, "invalid value %q for configuration %s: the gateway does not recompress (records are stored decompressed and Fetch returns uncompressed batches); want producer or uncompressed (docs/TOPIC-CONFIGS.md)", value, name)
	}
	return v, nil
}

func checkBool(name, value string) (string, *apiError) {
	v, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil || !slices.Contains([]string{"true", "false"}, strings.ToLower(strings.TrimSpace(value))) {
		return "", newAPIError(kerr.InvalidConfig, "invalid value %q for configuration %s: want true or false", value, name)
	}
	return strconv.FormatBool(v), nil
}

func checkRatio(name, value string) (string, *apiError) {
	f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil || f < 0 || f > 1 {
		return "", newAPIError(kerr.InvalidConfig, "invalid value %q for configuration %s: want a number from 0 to 1", value, name)
	}
	return strings.TrimSpace(value), nil
}

// checkCleanupPolicy accepts delete, compact, or both (in either order).
func checkCleanupPolicy(name, value string) (string, *apiError) {
	var items []string
	for item := range strings.SplitSeq(value, ",") {
		item = strings.TrimSpace(item)
		if item != cleanupPolicyDelete && item != cleanupPolicyCompact || slices.Contains(items, item) {
			return "", newAPIError(kerr.InvalidConfig, "invalid value %q for configuration %s: want delete, compact or compact,delete", value, name)
		}
		items = append(items, item)
	}
	return strings.Join(items, ","), nil
}

// compactOnly reports whether a cleanup.policy never deletes by time or size.
func compactOnly(policy string) bool {
	return !slices.Contains(strings.Split(policy, ","), cleanupPolicyDelete)
}

// storedChange is a change of a topic's stored configs: a new value, or nil for "back to the
// default".
type storedChange struct {
	values map[string]*string
	// replace: configs not named go back to their defaults (legacy AlterConfigs).
	replace bool
}

func (c *storedChange) set(name, value string) *apiError {
	v, err := storedConfigs[name].check(name, value)
	if err != nil {
		return err
	}
	if c.values == nil {
		c.values = make(map[string]*string)
	}
	c.values[name] = &v
	return nil
}

func (c *storedChange) reset(name string) {
	if c.values == nil {
		c.values = make(map[string]*string)
	}
	c.values[name] = nil
}

func (c *storedChange) empty() bool { return len(c.values) == 0 && !c.replace }

// apply returns the stored configs after the change.
func (c *storedChange) apply(cur map[string]string) map[string]string {
	out := maps.Clone(cur)
	if c.replace || out == nil {
		out = make(map[string]string)
	}
	for name, v := range c.values {
		if v == nil {
			delete(out, name)
		} else {
			out[name] = *v
		}
	}
	return out
}

// topicChange is a change of a topic's configs: those Iggy holds and those the gateway stores.
type topicChange struct {
	retentionChange
	stored storedChange
}

func (c *topicChange) set(name, value string) *apiError {
	if storedConfigs[name] != nil {
		return c.stored.set(name, value)
	}
	return c.retentionChange.set(name, value)
}

func (c *topicChange) reset(name string) *apiError {
	if storedConfigs[name] != nil {
		c.stored.reset(name)
		return nil
	}
	return c.retentionChange.reset(name)
}

// resetAll makes the change reset every config not named (legacy AlterConfigs).
func (c *topicChange) resetAll() {
	c.retentionChange.resetAll()
	c.stored.replace = true
}

// checkCombination refuses a retention with a compact-only cleanup.policy: Kafka ignores it
// there, and Iggy would apply it. r and stored are the topic's configs after the change.
func checkCombination(r retention, stored map[string]string) *apiError {
	if policy, ok := stored[configCleanupPolicy]; ok && compactOnly(policy) && r != defaultRetention {
		return newAPIError(kerr.InvalidConfig, "cleanup.policy=compact never deletes records, but the topic has retention.ms or retention.bytes set: use cleanup.policy=compact,delete to keep records only that long, or reset the retention to -1")
	}
	return nil
}

// topicState returns what the gateway stores about an Iggy topic; admin reads catch up
// with the log first (sync), so that they see every gateway's changes.
func (b *Broker) topicState(ctx context.Context, kafkaTopic string, topicID uint32, sync bool) (topicstate.State, *apiError) {
	if b.state == nil {
		return topicstate.State{TopicID: topicID}, nil
	}
	if sync {
		if err := b.state.Sync(ctx); err != nil {
			b.log.Warn("topic state read failed", "topic", kafkaTopic, "err", err)
			return topicstate.State{}, newAPIError(kerr.RequestTimedOut, "reading the topic state failed: %v", err)
		}
		return b.state.Cached(kafkaTopic, topicID), nil
	}
	return b.state.Get(ctx, kafkaTopic, topicID), nil
}

// saveStoredConfigs writes a topic's stored configs.
func (b *Broker) saveStoredConfigs(ctx context.Context, kafkaTopic string, topicID uint32, configs map[string]string) *apiError {
	if b.state == nil {
		if len(configs) == 0 {
			return nil
		}
		return newAPIError(kerr.InvalidConfig, "this gateway has no topic state store: %s cannot be stored", strings.Join(slices.Sorted(maps.Keys(configs)), ", "))
	}
	if err := b.state.SetConfigs(ctx, kafkaTopic, topicID, configs); err != nil {
		if errors.Is(err, topicstate.ErrSuperseded) { // another gateway became the controller
			return newAPIError(kerr.NotController, "this gateway is no longer the controller: %v", err)
		}
		b.log.Warn("storing topic configs failed", "topic", kafkaTopic, "err", err)
		return newAPIError(kerr.RequestTimedOut, "storing the topic configs failed (they may or may not have been stored): %v", err)
	}
	return nil
}

// storedConfigEntries describes the stored configs of a topic: set ones as
// DYNAMIC_TOPIC_CONFIG, the others with their default.
func (b *Broker) storedConfigEntries(stored map[string]string) []configEntry {
	entries := make([]configEntry, 0, len(storedConfigs))
	for name, c := range storedConfigs {
		def := configSynonym{c.brokerName, c.defaultValue(b), kmsg.ConfigSourceDefaultConfig}
		e := configEntry{name: name, typ: c.typ, doc: c.doc}
		if v, ok := stored[name]; ok {
			e.value, e.source = v, kmsg.ConfigSourceDynamicTopicConfig
			e.synonyms = []configSynonym{{name, v, kmsg.ConfigSourceDynamicTopicConfig}, def}
		} else {
			e.value, e.source = def.value, kmsg.ConfigSourceDefaultConfig
			e.synonyms = []configSynonym{def}
		}
		entries = append(entries, e)
	}
	return entries
}

// topicEntries describes every config of a topic, sorted by name.
func (b *Broker) topicEntries(t *iggy.Topic, stored map[string]string) []configEntry {
	return b.allTopicEntries(retentionOf(t), stored)
}

func (b *Broker) allTopicEntries(r retention, stored map[string]string) []configEntry {
	entries := append(topicConfigEntries(r), b.storedConfigEntries(stored)...)
	slices.SortFunc(entries, func(a, b configEntry) int { return strings.Compare(a.name, b.name) })
	return entries
}
