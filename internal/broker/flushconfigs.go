package broker

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// Kafka's flush configs map onto Iggy's create-only flush options (docs/DURABILITY.md):
//
//	flush.messages  1: fsync every write (Iggy enforce_fsync, messages_required_to_save=1);
//	                9223372036854775807 (Kafka's default): no forced fsync, each write still
//	                reaches the segment file before the answer (messages_required_to_save=1)
//	flush.ms        only 9223372036854775807 (Iggy has no time-based fsync)
//
// Both can only be given at CreateTopics: Iggy cannot change them on an existing topic.
// Without them a topic gets the gateway's default (IGGY_KAFKA_TOPIC_FLUSH).
const (
	configFlushMessages = "flush.messages"
	configFlushMs       = "flush.ms"
	brokerFlushMessages = "log.flush.interval.messages"
	configIggyFlush     = "iggy.topic.flush"
	kafkaNoFlush        = math.MaxInt64
)

var kafkaNoFlushValue = strconv.FormatInt(kafkaNoFlush, 10)

func isFlushConfig(name string) bool { return name == configFlushMessages || name == configFlushMs }

// topicFlushMode returns the flush mode of a topic to create: the CreateTopics configs'
// flush.messages, else the gateway default.
func (b *Broker) topicFlushMode(configs []kmsg.CreateTopicsRequestTopicConfig) (durability.Mode, *apiError) {
	mode := b.defaultFlushMode()
	for _, c := range configs {
		if !isFlushConfig(c.Name) || c.Value == nil { // nulls are refused with the other configs
			continue
		}
		n, err := parseKafkaLong(c.Name, *c.Value)
		if err != nil {
			return "", err
		}
		switch {
		case c.Name == configFlushMs && n != kafkaNoFlush:
			return "", newAPIError(kerr.InvalidConfig, "flush.ms=%d is not supported: Iggy has no time-based fsync; use flush.messages=1 to fsync every write (docs/DURABILITY.md)", n)
		case c.Name == configFlushMessages && n == 1:
			mode = durability.Fsync
		case c.Name == configFlushMessages && n == kafkaNoFlush:
			mode = durability.Write
		case c.Name == configFlushMessages:
			return "", newAPIError(kerr.InvalidConfig, "flush.messages=%d is not supported: Iggy either fsyncs every write (flush.messages=1) or none (%s); it cannot keep each write in the page cache and fsync every N (docs/DURABILITY.md)", n, kafkaNoFlushValue)
		}
	}
	return mode, nil
}

// defaultFlushMode is IGGY_KAFKA_TOPIC_FLUSH.
func (b *Broker) defaultFlushMode() durability.Mode { return durability.Mode(b.cfg.TopicFlush) }

// withFlush returns o with the flush options of mode m.
func withFlush(o iggy.TopicOptions, m durability.Mode) iggy.TopicOptions {
	m.Apply(&o)
	return o
}

// withFlushEntries adds the flush configs of a topic whose flush options are f to entries,
// keeping them sorted by name. A value other than the gateway default counts as set on the
// topic (Iggy does not say whether the gateway default or a client chose it).
func (b *Broker) withFlushEntries(entries []configEntry, f durability.InForce) []configEntry {
	flushMessages := kafkaNoFlushValue
	if f.Fsync && f.Known {
		flushMessages = strconv.FormatUint(uint64(f.Messages), 10)
	}
	def, defMessages := b.defaultFlush()
	iggyFlush := f.String()
	source := func(value, defValue string) kmsg.ConfigSource {
		if value == defValue {
			return kmsg.ConfigSourceDefaultConfig
		}
		return kmsg.ConfigSourceDynamicTopicConfig
	}
	doc := "What an acknowledged write means on this topic (Iggy's flush options, fixed at creation): write = in Iggy's segment file before the answer (survives an Iggy process crash), fsync = also fsynced (survives a machine crash). Read-only."
	if _, ok := f.Mode(); !ok && f.Known {
		doc += " This topic does not write each acknowledged record before answering. " + durability.Fix + "."
	}
	entries = append(entries,
		flushEntry(configFlushMessages, flushMessages, source(flushMessages, defMessages), kmsg.ConfigTypeLong,
			"Messages between fsyncs (Iggy enforce_fsync with messages_required_to_save). 1: every write is fsynced. "+kafkaNoFlushValue+": no forced fsync. Can only be set when the topic is created.",
			brokerFlushMessages, defMessages),
		flushEntry(configFlushMs, kafkaNoFlushValue, kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeLong,
			"Iggy has no time-based fsync.", "", ""),
		flushEntry(configIggyFlush, iggyFlush, source(iggyFlush, string(def)), kmsg.ConfigTypeString, doc,
			configIggyFlush, string(def)),
	)
	slices.SortFunc(entries, func(a, b configEntry) int { return strings.Compare(a.name, b.name) })
	return entries
}

// flushEntry is a read-only topic config whose default, when brokerName is set, is that
// broker config.
func flushEntry(name, value string, source kmsg.ConfigSource, typ kmsg.ConfigType, doc, brokerName, brokerValue string) configEntry {
	e := configEntry{name: name, value: value, source: source, readOnly: true, typ: typ, doc: doc}
	if source != kmsg.ConfigSourceDefaultConfig || brokerName == "" {
		e.synonyms = append(e.synonyms, configSynonym{name, value, source})
	}
	if brokerName != "" {
		e.synonyms = append(e.synonyms, configSynonym{brokerName, brokerValue, kmsg.ConfigSourceStaticBrokerConfig})
	}
	return e
}

// plannedFlush is what a topic created with mode m will report.
func plannedFlush(m durability.Mode) durability.InForce {
	o := withFlush(iggy.TopicOptions{}, m)
	if o.EnforceFsync == nil {
		o.EnforceFsync = new(bool) // Iggy's default
	}
	return durability.Of(&iggy.Topic{DerivedOptions: o})
}

// defaultFlush is the flush mode of new topics and its flush.messages.
func (b *Broker) defaultFlush() (durability.Mode, string) {
	m := b.defaultFlushMode()
	if m == "" {
		m = durability.Write
	}
	if m == durability.Fsync {
		return m, "1"
	}
	return m, kafkaNoFlushValue
}

// brokerFlushEntries describes the flush default of new topics.
func (b *Broker) brokerFlushEntries() []configEntry {
	m, flushMessages := b.defaultFlush()
	static := func(name, value string, typ kmsg.ConfigType, doc string) configEntry {
		return configEntry{name: name, value: value, source: kmsg.ConfigSourceStaticBrokerConfig, readOnly: true, typ: typ, doc: doc,
			synonyms: []configSynonym{{name, value, kmsg.ConfigSourceStaticBrokerConfig}}}
	}
	return []configEntry{
		static(configIggyFlush, string(m), kmsg.ConfigTypeString, "Flush options of the Iggy topics the gateway creates (IGGY_KAFKA_TOPIC_FLUSH; docs/DURABILITY.md)."),
		static(brokerFlushMessages, flushMessages, kmsg.ConfigTypeLong, "flush.messages of topics created without one (IGGY_KAFKA_TOPIC_FLUSH)."),
	}
}

// weakTopicsWarned remembers the Iggy topics already reported as buffering acknowledged
// writes, so that DescribeConfigs logs each once per process, not once per request.
var weakTopicsWarned sync.Map

// warnWeakFlush logs a WARN the first time a topic is seen whose options do not write each
// acknowledged record before answering (a topic created with Iggy's defaults).
func (b *Broker) warnWeakFlush(kafkaTopic string, f durability.InForce) {
	if !f.Known || f.WritesEachAck() {
		return
	}
	if _, seen := weakTopicsWarned.LoadOrStore(kafkaTopic, true); seen {
		return
	}
	b.log.Warn("topic buffers acknowledged writes in Iggy's memory: an Iggy crash can lose them. "+durability.Fix,
		"topic", kafkaTopic, "flush", f.String())
}
