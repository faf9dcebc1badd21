package iggy

import (
	"bytes"
	"context"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// Client benchmarks over loopback against the in-memory server: they measure the client's
// per-call cost (encoding, syscalls, decoding), not Iggy's.

func benchClient(b *testing.B) (*Client, Identifier, Identifier) {
	srv, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	ctx := context.Background()
	c, err := Dial(ctx, Config{Addr: srv.Addr(), Username: "iggy", Password: "iggy", PoolSize: 1, PingInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	s, err := c.CreateStream(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	tp, err := c.CreateTopic(ctx, ID(s.ID), "t", 1, TopicOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return c, ID(s.ID), ID(tp.ID)
}

func BenchmarkSendBatch100x1KiB(b *testing.B) {
	c, s, t := benchClient(b)
	payload := bytes.Repeat([]byte{'x'}, 1024)
	batch := NewBatch(100 * 1024)
	ctx := context.Background()
	b.SetBytes(100 * 1024)
	b.ReportAllocs()
	for b.Loop() {
		batch.Reset()
		for range 100 {
			if err := batch.Add(0, payload, nil); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := c.SendBatch(ctx, s, t, 0, batch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPoll100x1KiB(b *testing.B) {
	c, s, t := benchClient(b)
	ctx := context.Background()
	msgs := make([]Message, 100)
	for i := range msgs {
		msgs[i].Payload = bytes.Repeat([]byte{'x'}, 1024)
	}
	if _, err := c.SendMessages(ctx, s, t, 0, msgs); err != nil {
		b.Fatal(err)
	}
	zero := uint32(0)
	req := PollRequest{Consumer: Consumer{Kind: ConsumerKindConsumer, ID: ID(1)}, Stream: s, Topic: t, Partition: &zero,
		Strategy: PollingStrategy{Kind: PollOffset}, Count: 100}
	b.SetBytes(100 * 1024)
	b.ReportAllocs()
	for b.Loop() {
		p, err := c.PollMessages(ctx, req)
		if err != nil || len(p.Messages) != 100 {
			b.Fatal(err)
		}
	}
}
