package iggy

import (
	"bytes"
	"fmt"
	"testing"
)

// Poll replies large enough to come from the shared buffer pool: a result that is not
// released keeps its bytes however many polls follow on the same connection, and released
// ones are reused without mixing up later results.
func TestPollReplyBuffersAreOwnedByTheirResult(t *testing.T) {
	b := testBackend(t)
	cfg := b.config()
	cfg.PoolSize = 1 // every poll on one connection
	c, err := Dial(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	s := newStream(t, c)
	tp, err := c.CreateTopic(ctx, ID(s.ID), "polls", 1, TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const messages, size = 40, 4000
	payload := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, size) }
	msgs := make([]Message, messages)
	for i := range msgs {
		msgs[i] = Message{Payload: payload(i)}
	}
	if _, err := c.SendMessages(ctx, ID(s.ID), ID(tp.ID), 0, msgs); err != nil {
		t.Fatal(err)
	}
	zero := uint32(0)
	poll := func(from uint64) *Polled {
		t.Helper()
		p, err := c.PollMessages(ctx, PollRequest{Consumer: Consumer{Kind: ConsumerKindConsumer, ID: Name("r")},
			Stream: ID(s.ID), Topic: ID(tp.ID), Partition: &zero, Strategy: PollingStrategy{Kind: PollOffset, Value: from}, Count: 10})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	check := func(p *Polled, from uint64) error {
		if len(p.Messages) != 10 {
			return fmt.Errorf("%d messages", len(p.Messages))
		}
		for i, m := range p.Messages {
			if want := from + uint64(i); m.Offset != want || !bytes.Equal(m.Payload, payload(int(want))) {
				return fmt.Errorf("message %d: offset %d, payload %q…", i, m.Offset, m.Payload[:4])
			}
		}
		return nil
	}
	kept := poll(0)
	for round := range 20 {
		from := uint64(10 + round%3*10)
		p := poll(from)
		if err := check(p, from); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		p.Release()
		if len(p.Messages) != 0 {
			t.Fatal("Release left the messages in place")
		}
		p.Release() // idempotent
	}
	if err := check(kept, 0); err != nil {
		t.Fatalf("unreleased result changed under later polls: %v", err)
	}
}
