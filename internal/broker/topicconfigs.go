package broker

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// Kafka topic configs are mapped onto Iggy topic options; see docs/TOPIC-CONFIGS.md.
//
//	retention.ms     Iggy message expiry (µs = ms × 1000); -1 = never expire
//	retention.bytes  Iggy max topic size; -1 = unlimited
//
// The configs Iggy has no option for are kept by the gateway (storedconfigs.go).
// retention.minutes and retention.hours are accepted as alternative spellings of
// retention.ms when creating or altering (like the upstream gateway). Nothing else can be set:
// a config the gateway cannot honour is refused rather than silently ignored.
const (
	configRetentionMs      = "retention.ms"
	configRetentionMinutes = "retention.minutes"
	configRetentionHours   = "retention.hours"
	configRetentionBytes   = "retention.bytes"
	configCleanupPolicy    = "cleanup.policy"
)

const (
	// maxRetentionMs is the longest retention accepted: 2^32-1 seconds (about 136 years), as
	// the upstream gateway. Iggy adds the expiry to message timestamps in µs without overflow
	// checks, so absurdly large values must not reach it; -1 means "forever" anyway.
	maxRetentionMs = math.MaxUint32 * 1000
	// minRetentionBytes is one Iggy segment (1 GiB, the segment size of every topic the
	// gateway creates). Iggy enforces a topic size by deleting whole sealed segments and
	// refuses a limit below one segment.
	minRetentionBytes = 1 << 30
)

// retention is the part of an Iggy topic's options that Kafka configs describe.
type retention struct {
	expiry  uint64 // µs; iggy.Never: never expire
	maxSize uint64 // bytes; iggy.Never: unlimited
}

// defaultRetention is what a topic gets when no retention is asked for: Iggy's defaults.
var defaultRetention = retention{expiry: iggy.Never, maxSize: iggy.Never}

// retentionOf reads a topic's retention. Iggy reports 0 ("server default", stored only when a
// native tool updates a topic with 0) for settings that resolve to Iggy's defaults.
func retentionOf(t *iggy.Topic) retention {
	r := retention{expiry: t.MessageExpiry, maxSize: t.MaxTopicSize}
	if r.expiry == 0 {
		r.expiry = iggy.Never
	}
	if r.maxSize == 0 {
		r.maxSize = iggy.Never
	}
	return r
}

// retentionChange is a change of a topic's retention; nil fields stay as they are.
type retentionChange struct {
	expiry  *uint64
	maxSize *uint64
	// expiryName is the config that set expiry, to refuse two spellings of it in one request.
	expiryName string
}

// resetAll makes the change reset every setting to its default (legacy AlterConfigs replaces
// a topic's whole set of configs).
func (c *retentionChange) resetAll() {
	c.expiry, c.maxSize = ptrTo(defaultRetention.expiry), ptrTo(defaultRetention.maxSize)
}

func ptrTo[T any](v T) *T { return &v }

// empty reports whether the change changes nothing.
func (c *retentionChange) empty() bool { return c.expiry == nil && c.maxSize == nil }

// options renders the change as Iggy topic options, where 0 means "unchanged" on update and
// "server default" on create.
func (c *retentionChange) options() iggy.TopicOptions {
	var o iggy.TopicOptions
	if c.expiry != nil {
		o.MessageExpiry = *c.expiry
	}
	if c.maxSize != nil {
		o.MaxTopicSize = *c.maxSize
	}
	return o
}

// apply applies the change to r.
func (c *retentionChange) apply(r retention) retention {
	if c.expiry != nil {
		r.expiry = *c.expiry
	}
	if c.maxSize != nil {
		r.maxSize = *c.maxSize
	}
	return r
}

// set applies "name = value".
func (c *retentionChange) set(name, value string) *apiError {
	switch name {
	case configRetentionMs, configRetentionMinutes, configRetentionHours:
		us, err := parseRetentionTime(name, value)
		if err != nil {
			return err
		}
		return c.setExpiry(name, us)
	case configRetentionBytes:
		size, err := parseRetentionBytes(value)
		if err != nil {
			return err
		}
		c.maxSize = &size
		return nil
	}
	return refuseConfig(name)
}

// reset applies "name back to its default" (IncrementalAlterConfigs DELETE).
func (c *retentionChange) reset(name string) *apiError {
	switch name {
	case configRetentionMs, configRetentionMinutes, configRetentionHours:
		return c.setExpiry(name, defaultRetention.expiry)
	case configRetentionBytes:
		c.maxSize = ptrTo(defaultRetention.maxSize)
		return nil
	}
	return refuseConfig(name)
}

func (c *retentionChange) setExpiry(name string, us uint64) *apiError {
	if c.expiryName != "" && c.expiryName != name {
		return newAPIError(kerr.InvalidConfig, "%s and %s both set the retention time: use one of them", c.expiryName, name)
	}
	c.expiryName = name
	c.expiry = &us
	return nil
}

// refuseConfig is the answer to a config the gateway does not let clients change.
func refuseConfig(name string) *apiError {
	if isFlushConfig(name) {
		return newAPIError(kerr.InvalidConfig, "%s can only be given when the topic is created: Iggy cannot change a topic's flush options (docs/DURABILITY.md)", name)
	}
	return newAPIError(kerr.InvalidConfig, "config %q is not supported by this gateway (docs/TOPIC-CONFIGS.md lists the topic configs it honours or accepts)", name)
}

// isSettable reports whether name is a topic config clients can set.
func isSettable(name string) bool {
	switch name {
	case configRetentionMs, configRetentionMinutes, configRetentionHours, configRetentionBytes:
		return true
	}
	return storedConfigs[name] != nil
}

// parseKafkaLong parses a Kafka LONG config value (surrounding spaces allowed, as Kafka).
func parseKafkaLong(name, value string) (int64, *apiError) {
	n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	if err != nil {
		return 0, newAPIError(kerr.InvalidConfig, "invalid value %q for configuration %s: not a number", value, name)
	}
	return n, nil
}

// parseRetentionTime parses retention.ms, .minutes or .hours into an Iggy expiry in µs.
func parseRetentionTime(name, value string) (uint64, *apiError) {
	n, err := parseKafkaLong(name, value)
	if err != nil {
		return 0, err
	}
	unitMs := int64(1)
	switch name {
	case configRetentionMinutes:
		unitMs = 60_000
	case configRetentionHours:
		unitMs = 3_600_000
	}
	switch {
	case n == -1:
		return iggy.Never, nil
	case n < 1 || n > maxRetentionMs/unitMs:
		// 0 would mean "delete everything at once" in Kafka, and "server default" in Iggy.
		return 0, newAPIError(kerr.InvalidConfig, "invalid value %s for configuration %s: want -1 (never expire) or 1 to %d", value, name, maxRetentionMs/unitMs)
	}
	return uint64(n*unitMs) * 1000, nil
}

// parseRetentionBytes parses retention.bytes into an Iggy max topic size.
func parseRetentionBytes(value string) (uint64, *apiError) {
	n, err := parseKafkaLong(configRetentionBytes, value)
	if err != nil {
		return 0, err
	}
	switch {
	case n == -1:
		return iggy.Never, nil
	case n < minRetentionBytes:
		return 0, newAPIError(kerr.InvalidConfig, "invalid value %s for configuration retention.bytes: want -1 (unlimited) or at least %d (one Iggy segment: Iggy deletes whole segments)", value, int64(minRetentionBytes))
	}
	return uint64(n), nil
}

// configEntry is one config as DescribeConfigs and CreateTopics (v5+) report it.
type configEntry struct {
	name     string
	value    string
	source   kmsg.ConfigSource
	readOnly bool
	typ      kmsg.ConfigType
	doc      string
	// synonyms are the config's sources in order of precedence, itself first (Kafka lists a
	// topic config, then the broker default it falls back to).
	synonyms []configSynonym
}

type configSynonym struct {
	name, value string
	source      kmsg.ConfigSource
}

// Broker-level defaults of the topic configs: Iggy's defaults, which the gateway does not
// override when it creates topics.
const (
	brokerRetentionMs     = "log.retention.ms"
	brokerRetentionBytes  = "log.retention.bytes"
	brokerCleanupPolicy   = "log.cleanup.policy"
	defaultRetentionValue = "-1"
	cleanupPolicyDelete   = "delete"
)

// topicConfigEntries describes the retention configs of a topic with retention r (Iggy's
// options), sorted by name.
func topicConfigEntries(r retention) []configEntry {
	return []configEntry{
		topicLongEntry(configRetentionBytes, brokerRetentionBytes, r.maxSize, 1,
			"Largest size of the whole topic in bytes (Iggy max topic size, shared equally by its partitions; Kafka's is per partition). -1: unlimited. Iggy deletes the oldest sealed segments beyond it; at least one 1 GiB segment is kept per partition."),
		topicLongEntry(configRetentionMs, brokerRetentionMs, r.expiry, 1000,
			"How long messages are kept, in milliseconds (Iggy message expiry). -1: forever. Iggy deletes a sealed segment once its newest message is older than this; the segment being written is never deleted."),
	}
}

// topicLongEntry describes a retention setting whose Iggy value v is expressed in units of
// 1/div of the Kafka value (µs for ms): iggy.Never is the default -1, anything else was set
// on the topic. A value that is not a whole Kafka unit (set by a native Iggy tool) is rounded
// up, so the reported retention is never shorter than the real one.
func topicLongEntry(name, brokerName string, v, div uint64, doc string) configEntry {
	def := configSynonym{brokerName, defaultRetentionValue, kmsg.ConfigSourceDefaultConfig}
	e := configEntry{name: name, typ: kmsg.ConfigTypeLong, doc: doc}
	if v == iggy.Never {
		e.value, e.source = defaultRetentionValue, kmsg.ConfigSourceDefaultConfig
		e.synonyms = []configSynonym{def}
		return e
	}
	e.value = strconv.FormatUint(v/div+min(v%div, 1), 10)
	e.source = kmsg.ConfigSourceDynamicTopicConfig
	e.synonyms = []configSynonym{{name, e.value, kmsg.ConfigSourceDynamicTopicConfig}, def}
	return e
}

// brokerConfigEntries describes the broker: what the gateway does with topics, and the
// settings it runs with. All are read-only (they come from IGGY_KAFKA_* settings or are fixed
// by what Iggy does); sorted by name.
func (b *Broker) brokerConfigEntries() []configEntry {
	static := func(name, value string, typ kmsg.ConfigType, doc string) configEntry {
		return configEntry{name: name, value: value, source: kmsg.ConfigSourceStaticBrokerConfig, readOnly: true, typ: typ, doc: doc,
			synonyms: []configSynonym{{name, value, kmsg.ConfigSourceStaticBrokerConfig}}}
	}
	fixed := func(name, value string, typ kmsg.ConfigType, doc string) configEntry {
		return configEntry{name: name, value: value, source: kmsg.ConfigSourceDefaultConfig, readOnly: true, typ: typ, doc: doc,
			synonyms: []configSynonym{{name, value, kmsg.ConfigSourceDefaultConfig}}}
	}
	entries := []configEntry{
		static("auto.create.topics.enable", strconv.FormatBool(b.cfg.AutoCreateTopics), kmsg.ConfigTypeBoolean,
			"Whether Metadata creates missing topics (IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED)."),
		fixed("default.replication.factor", strconv.Itoa(b.iggyCopies()), kmsg.ConfigTypeInt,
			"The Iggy nodes behind the gateway: Iggy replicates every partition to every node of its cluster (docs/DEPLOYMENT.md)."),
		fixed("delete.topic.enable", "true", kmsg.ConfigTypeBoolean,
			"DeleteTopics deletes the Iggy topic (its stream is kept)."),
		fixed(brokerRetentionBytes, defaultRetentionValue, kmsg.ConfigTypeLong,
			"Topics are created without a size limit unless retention.bytes is given."),
		fixed(brokerRetentionMs, defaultRetentionValue, kmsg.ConfigTypeLong,
			"Topics are created without message expiry unless retention.ms is given."),
		static("node.id", strconv.Itoa(int(b.nodeID())), kmsg.ConfigTypeInt,
			"This gateway's broker id (IGGY_KAFKA_NODE_ID)."),
		static("num.partitions", strconv.Itoa(b.cfg.AutoCreatePartitions), kmsg.ConfigTypeInt,
			"Partitions of topics created without a partition count, by CreateTopics or auto-creation (IGGY_KAFKA_AUTO_CREATE_TOPICS_PARTITIONS)."),
	}
	entries = append(entries, b.brokerFlushEntries()...)
	for name, c := range storedConfigs {
		if !slices.ContainsFunc(entries, func(e configEntry) bool { return e.name == c.brokerName }) {
			entries = append(entries, fixed(c.brokerName, c.defaultValue(b), c.typ, "Default of the topic config "+name+". "+c.doc))
		}
	}
	slices.SortFunc(entries, func(a, b configEntry) int { return strings.Compare(a.name, b.name) })
	return entries
}
