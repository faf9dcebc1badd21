package iggylog

import (
	"bytes"
	"context"
	"fmt"

	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// ReservedStream is the Iggy stream of the gateway's internal logs (the coordinator log, the
// topic-state log, the leader-epoch log). It is never shown to Kafka clients.
const ReservedStream = "__iggy_kafka_gateway"

// API is the part of the Iggy client a Topic uses; *iggy.Client implements it.
type API interface {
	GetStream(ctx context.Context, stream iggy.Identifier) (*iggy.Stream, error)
	CreateStream(ctx context.Context, name string) (*iggy.Stream, error)
	GetTopic(ctx context.Context, stream, topic iggy.Identifier) (*iggy.Topic, error)
	CreateTopic(ctx context.Context, stream iggy.Identifier, name string, partitions uint32, opts iggy.TopicOptions) (*iggy.Topic, error)
	SendMessages(ctx context.Context, stream, topic iggy.Identifier, partition uint32, msgs []iggy.Message) (iggy.SendConfirmation, error)
	PollMessages(ctx context.Context, req iggy.PollRequest) (*iggy.Polled, error)
}

// Topic is a Log stored in an Iggy topic: log partition k is Iggy partition k, one record is
// one message (the payload), and log offsets are Iggy offsets.
type Topic struct {
	api        API
	stream     iggy.Identifier
	topic      iggy.Identifier
	partitions int

	// Flush is the flush mode the topic is created with (durability.Write unless set).
	Flush durability.Mode
	// inForce is what the topic's flush options promise, known after Ensure.
	inForce durability.InForce
}

// NewTopic returns the log in stream/topic with the given partition count (stream is
// ReservedStream in production).
func NewTopic(api API, stream, topic string, partitions int) *Topic {
	return &Topic{api: api, stream: iggy.Name(stream), topic: iggy.Name(topic), partitions: partitions, Flush: durability.Write}
}

// maxSendBytes bounds one SendMessages of Append, well below Iggy's 64 MiB frame.
const maxSendBytes = 8 << 20

// pollConsumer identifies the log's reads to Iggy; reads never store a consumer offset. Its
// name predates the logs other than the coordinator log, and stays so Iggy sees no change.
var pollConsumer = iggy.Consumer{Kind: iggy.ConsumerKindConsumer, ID: iggy.Name("iggy-kafka-gateway-coordinator")}

// Ensure creates the stream and the topic (never expiring, unlimited size, flush options of
// l.Flush) if absent and checks the partition count of an existing topic. An existing topic
// keeps the flush options it was created with: FlushInForce tells what they are.
func (l *Topic) Ensure(ctx context.Context) error {
	if _, err := l.api.GetStream(ctx, l.stream); err != nil {
		if !iggy.IsCode(err, iggy.CodeStreamIDNotFound, iggy.CodeStreamNameNotFound) {
			return fmt.Errorf("looking up stream %q: %w", l.stream.Name, err)
		}
		if _, err := l.api.CreateStream(ctx, l.stream.Name); err != nil && !iggy.IsCode(err, iggy.CodeStreamNameAlreadyExists) {
			return fmt.Errorf("creating stream %q: %w", l.stream.Name, err)
		}
	}
	t, err := l.api.GetTopic(ctx, l.stream, l.topic)
	if iggy.IsCode(err, iggy.CodeTopicIDNotFound, iggy.CodeTopicNameNotFound) {
		opts := iggy.TopicOptions{MessageExpiry: iggy.Never, MaxTopicSize: iggy.Never}
		l.Flush.Apply(&opts)
		t, err = l.api.CreateTopic(ctx, l.stream, l.topic.Name, uint32(l.partitions), opts)
		if iggy.IsCode(err, iggy.CodeTopicNameAlreadyExists) { // created concurrently
			t, err = l.api.GetTopic(ctx, l.stream, l.topic)
		}
	}
	if err != nil {
		return fmt.Errorf("ensuring topic %s/%s: %w", l.stream.Name, l.topic.Name, err)
	}
	if int(t.PartitionsCount) != l.partitions {
		return fmt.Errorf("topic %s/%s has %d partitions, the log needs %d", l.stream.Name, l.topic.Name, t.PartitionsCount, l.partitions)
	}
	l.inForce = durability.Of(t)
	return nil
}

// FlushInForce is what the topic's flush options make of an acknowledged append (after
// Ensure): a topic created by an older gateway with Iggy's defaults can lose acknowledged
// appends when Iggy crashes.
func (l *Topic) FlushInForce() durability.InForce { return l.inForce }

// Partitions implements Log.
func (l *Topic) Partitions() int { return l.partitions }

// Append implements Log. Records go out in sends of at most maxSendBytes; a single writer
// per partition keeps them contiguous.
func (l *Topic) Append(ctx context.Context, partition int, records [][]byte) (uint64, error) {
	var first uint64
	for start := 0; start < len(records); {
		end, size := start, 0
		for end < len(records) && (end == start || size+len(records[end]) <= maxSendBytes) {
			size += len(records[end])
			end++
		}
		msgs := make([]iggy.Message, end-start)
		for i, r := range records[start:end] {
			msgs[i].Payload = r
		}
		conf, err := l.api.SendMessages(ctx, l.stream, l.topic, uint32(partition), msgs)
		if err != nil {
			return 0, err
		}
		if start == 0 {
			first = conf.BaseOffset
		}
		start = end
	}
	return first, nil
}

// ReadFrom implements Log.
func (l *Topic) ReadFrom(ctx context.Context, partition int, offset uint64, max int) ([]Entry, error) {
	p := uint32(partition)
	polled, err := l.api.PollMessages(ctx, iggy.PollRequest{
		Consumer:  pollConsumer,
		Stream:    l.stream,
		Topic:     l.topic,
		Partition: &p,
		Strategy:  iggy.PollingStrategy{Kind: iggy.PollOffset, Value: offset},
		Count:     uint32(max),
	})
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(polled.Messages))
	for _, m := range polled.Messages {
		if m.Offset < offset {
			continue
		}
		// Payloads alias the reply buffer; records outlive it while Load decodes them.
		out = append(out, Entry{Offset: m.Offset, Data: bytes.Clone(m.Payload)})
	}
	return out, nil
}

// End implements Log.
func (l *Topic) End(ctx context.Context, partition int) (uint64, error) {
	t, err := l.api.GetTopic(ctx, l.stream, l.topic)
	if err != nil {
		return 0, err
	}
	for _, p := range t.Partitions {
		if int(p.ID) == partition {
			return p.HighWatermark(), nil
		}
	}
	return 0, fmt.Errorf("topic %s/%s has no partition %d", l.stream.Name, l.topic.Name, partition)
}
