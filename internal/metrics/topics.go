package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// MaxTopicLabels is how many topics get a topic label value of their own; the data of any
// later topic counts under "other".
const MaxTopicLabels = 100

// otherTopics is the topic label of topics past MaxTopicLabels.
const otherTopics = "other"

// topicMetrics are the records and bytes of the data path per Kafka topic.
type topicMetrics struct {
	producedRecords, producedBytes *prometheus.CounterVec
	fetchedRecords, fetchedBytes   *prometheus.CounterVec
	labels                         *topicLabels
}

func newTopicMetrics(m *Metrics) topicMetrics {
	return topicMetrics{
		producedRecords: m.counterVec("produced_records_total", "Kafka records written to Iggy, per topic (at most 100 topics, then \"other\").", "topic"),
		producedBytes:   m.counterVec("produced_bytes_total", "Bytes of Iggy messages written for Kafka records, per topic.", "topic"),
		fetchedRecords:  m.counterVec("fetched_records_total", "Kafka records returned to consumers, per topic.", "topic"),
		fetchedBytes:    m.counterVec("fetched_bytes_total", "Bytes of Kafka record batches returned to consumers, per topic.", "topic"),
		labels:          &topicLabels{max: MaxTopicLabels, known: map[string]struct{}{}},
	}
}

// Produced counts records written to topic (broker.DataObserver).
func (m *Metrics) Produced(topic string, records, bytes int) {
	t := m.topic.labels.of(topic)
	m.topic.producedRecords.WithLabelValues(t).Add(float64(records))
	m.topic.producedBytes.WithLabelValues(t).Add(float64(bytes))
}

// Fetched counts records read from topic (broker.DataObserver).
func (m *Metrics) Fetched(topic string, records, bytes int) {
	t := m.topic.labels.of(topic)
	m.topic.fetchedRecords.WithLabelValues(t).Add(float64(records))
	m.topic.fetchedBytes.WithLabelValues(t).Add(float64(bytes))
}

// topicLabels hands out label values: the first max topics seen are their own value, later
// ones "other". A topic keeps its value for the life of the process (a deleted topic's series
// stays, as Prometheus counters should).
type topicLabels struct {
	max   int
	mu    sync.RWMutex
	known map[string]struct{}
}

func (l *topicLabels) of(topic string) string {
	l.mu.RLock()
	_, ok := l.known[topic]
	full := len(l.known) >= l.max
	l.mu.RUnlock()
	switch {
	case ok:
		return topic
	case full:
		return otherTopics
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.known[topic]; !ok {
		if len(l.known) >= l.max {
			return otherTopics
		}
		l.known[topic] = struct{}{}
	}
	return topic
}
