package memserver

import (
	"slices"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// BenchmarkAppendAndPoll measures the state engine alone: append a 100-message batch, then
// poll 100 messages that start in the middle of it (the re-headed slice path).
func BenchmarkAppendAndPoll(b *testing.B) {
	s := newState(time.Now, "iggy", "iggy")
	sess := s.openSession(0, [16]byte{1}, "bench")
	if _, err := s.createStream(sess, "s"); err != nil {
		b.Fatal(err)
	}
	if _, err := s.createTopic(sess, name("s"), "t", 1, topicSettings{}); err != nil {
		b.Fatal(err)
	}
	batch := wire.NewBatch(100 * 100)
	payload := make([]byte, 100)
	for range 100 {
		_ = batch.Add(0, payload, nil)
	}
	data := batch.Bytes()
	req := wire.PollRequest{Consumer: wire.Consumer{Kind: 1, ID: id(1)}, Stream: name("s"), Topic: name("t"),
		Strategy: wire.PollingStrategy{Kind: wire.PollOffset}, Count: 100}
	var out []byte
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.sendMessages(sess, name("s"), name("t"), partitioning{kind: wire.PartitioningPartitionID}, slices.Clone(data), 100); err != nil {
			b.Fatal(err)
		}
		req.Strategy.Value = uint64(i*100 + 50)
		p, err := s.pollMessages(sess, req)
		if err != nil {
			b.Fatal(err)
		}
		if out, _ = appendSpans(out[:0], p.spans); len(out) == 0 && i > 0 {
			b.Fatal("empty poll")
		}
	}
}

// BenchmarkRoundTrip measures one SendMessages request over TCP, framing included.
func BenchmarkRoundTrip(b *testing.B) {
	srv, err := Start(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c := connect(b, srv)
	c.ok(wire.CodeCreateStream, wire.AppendCreateStream(nil, "s"))
	c.ok(wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: wire.Identifier{Name: "s"}, PartitionsCount: 1, Name: "t"}))
	body := sendBody(b, "s", "t", 0, "a", "b", "c", "d", "e", "f", "g", "h", "i", "j")
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		c.ok(wire.CodeSendMessages, body)
	}
}
