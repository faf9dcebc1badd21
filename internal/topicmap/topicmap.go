// Package topicmap maps Kafka topic names to Iggy streams and topics, and caches the
// resolution (ids, partition count) so the data path does not ask Iggy on every request.
//
// Rule: a Kafka topic listed in the topic map goes to its (stream, topic); any other Kafka
// topic goes to the default stream under its own name. The reverse direction (listing Iggy
// topics as Kafka topics) shows only Iggy topics that resolve back to themselves, so every
// listed name can be used.
package topicmap

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// InternalStream is the Iggy stream the gateway reserves for its own state (coordinator log,
// checkpoints). It is never mapped, listed or created as a Kafka topic's stream.
const InternalStream = "__iggy_kafka_gateway"

// Target is where a Kafka topic lives in Iggy.
type Target struct {
	Stream string
	Topic  string
}

// Map is an immutable Kafka→Iggy naming rule.
type Map struct {
	defaultStream string
	overrides     map[string]Target // by Kafka name
	reverse       map[Target]string // override target → Kafka name
}

// New builds a map. overrides maps Kafka names to targets; a target with an empty Topic uses
// the Kafka name.
func New(defaultStream string, overrides map[string]Target) (*Map, error) {
	if err := validateStreamName(defaultStream); err != nil {
		return nil, fmt.Errorf("default stream: %w", err)
	}
	m := &Map{
		defaultStream: defaultStream,
		overrides:     make(map[string]Target, len(overrides)),
		reverse:       make(map[Target]string, len(overrides)),
	}
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		t := overrides[name]
		if err := ValidateKafkaName(name); err != nil {
			return nil, fmt.Errorf("topic %q: %w", name, err)
		}
		if t.Topic == "" {
			t.Topic = name
		}
		if err := validateStreamName(t.Stream); err != nil {
			return nil, fmt.Errorf("topic %q: stream: %w", name, err)
		}
		if err := validateIggyName(t.Topic); err != nil {
			return nil, fmt.Errorf("topic %q: iggy topic: %w", name, err)
		}
		if other, dup := m.reverse[t]; dup {
			return nil, fmt.Errorf("topics %q and %q both map to stream %q topic %q", other, name, t.Stream, t.Topic)
		}
		m.overrides[name] = t
		m.reverse[t] = name
	}
	return m, nil
}

// DefaultStream is the stream of unlisted Kafka topics.
func (m *Map) DefaultStream() string { return m.defaultStream }

// String describes the map canonically: the same rules give the same text, whatever file
// they came from (gateways compare it, docs/DEPLOYMENT.md).
func (m *Map) String() string {
	var b strings.Builder
	b.WriteString("default=" + m.defaultStream)
	for _, name := range slices.Sorted(maps.Keys(m.overrides)) {
		t := m.overrides[name]
		fmt.Fprintf(&b, ";%s=%s/%s", name, t.Stream, t.Topic)
	}
	return b.String()
}

// Resolve returns where kafkaTopic lives. It does not validate the name.
func (m *Map) Resolve(kafkaTopic string) Target {
	if t, ok := m.overrides[kafkaTopic]; ok {
		return t
	}
	return Target{Stream: m.defaultStream, Topic: kafkaTopic}
}

// Streams returns every stream the map can resolve to, sorted, default stream included.
func (m *Map) Streams() []string {
	set := map[string]struct{}{m.defaultStream: {}}
	for _, t := range m.overrides {
		set[t.Stream] = struct{}{}
	}
	return slices.Sorted(maps.Keys(set))
}

// KafkaNamesIn returns the Kafka names the map lists as living in stream, sorted (names of the
// default stream that are not listed are not included).
func (m *Map) KafkaNamesIn(stream string) []string {
	var names []string
	for name, t := range m.overrides {
		if t.Stream == stream {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// KafkaName returns the Kafka name under which Iggy topic (stream, topic) is visible, or false
// when no Kafka name resolves to it (for example a topic of an unmapped stream, or a topic of
// the default stream whose name is overridden to point elsewhere).
func (m *Map) KafkaName(stream, topic string) (string, bool) {
	t := Target{Stream: stream, Topic: topic}
	if name, ok := m.reverse[t]; ok {
		return name, true
	}
	if stream != m.defaultStream || ValidateKafkaName(topic) != nil {
		return "", false
	}
	if m.Resolve(topic) != t {
		return "", false
	}
	return topic, true
}

// ErrInvalidTopic is wrapped by ValidateKafkaName errors (Kafka error 17).
var ErrInvalidTopic = errors.New("invalid topic name")

// maxKafkaName is Kafka's limit (249 leaves room for partition suffixes in log dirs).
const maxKafkaName = 249

// ValidateKafkaName applies Kafka's topic name rules: 1..249 bytes of [A-Za-z0-9._-], not "."
// or "..".
func ValidateKafkaName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidTopic)
	case len(name) > maxKafkaName:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidTopic, len(name), maxKafkaName)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %q is reserved", ErrInvalidTopic, name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isKafkaNameByte(c) {
			return fmt.Errorf("%w: %q contains %q; allowed are ASCII letters, digits, '.', '_' and '-'", ErrInvalidTopic, name, c)
		}
	}
	return nil
}

func isKafkaNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// maxIggyName is Iggy's limit on stream and topic names (one length byte on the wire).
const maxIggyName = 255

func validateIggyName(name string) error {
	if name == "" || len(name) > maxIggyName {
		return fmt.Errorf("name %q must be 1..%d bytes", name, maxIggyName)
	}
	if strings.TrimSpace(name) != name {
		return fmt.Errorf("name %q has leading or trailing spaces", name)
	}
	return nil
}

func validateStreamName(name string) error {
	if name == InternalStream {
		return fmt.Errorf("stream %q is reserved for the gateway's own state", name)
	}
	return validateIggyName(name)
}
