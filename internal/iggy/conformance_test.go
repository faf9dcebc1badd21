package iggy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// The conformance suite drives every client command and error path against a server: a real
// Iggy 0.9 server when IGGY_TEST_ADDR is set (with IGGY_TEST_USERNAME / IGGY_TEST_PASSWORD),
// otherwise the in-memory server. Names are unique per test so it can share a real server.

type backend struct {
	addr, user, pass string
	real             bool
}

func testBackend(t *testing.T) backend {
	t.Helper()
	if addr := os.Getenv("IGGY_TEST_ADDR"); addr != "" {
		t.Logf("iggy backend: real at %s", addr)
		return backend{addr: addr, user: envOr("IGGY_TEST_USERNAME", "iggy"), pass: envOr("IGGY_TEST_PASSWORD", "iggy"), real: true}
	}
	srv, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
	if err != nil {
		t.Fatalf("start memserver: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	t.Logf("iggy backend: memserver at %s", srv.Addr())
	return backend{addr: srv.Addr(), user: "iggy", pass: "iggy"}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func (b backend) config() Config {
	return Config{Addr: b.addr, Username: b.user, Password: b.pass, PoolSize: 2, PingInterval: -1}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dialTest(t *testing.T, b backend) *Client {
	t.Helper()
	c, err := Dial(testCtx(t), b.config())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// unique returns a name unique to this run: prefix-<8 hex>.
func unique(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// newStream creates a uniquely named stream that is deleted when the test ends.
func newStream(t *testing.T, c *Client) *Stream {
	t.Helper()
	s, err := c.CreateStream(testCtx(t), unique("conf"))
	if err != nil {
		t.Fatalf("CreateStream: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.DeleteStream(ctx, ID(s.ID))
	})
	return s
}

// newTopic creates a topic of partitions partitions in a new stream (see newStream).
func newTopic(t *testing.T, c *Client, name string, partitions uint32) (*Stream, *Topic) {
	t.Helper()
	s := newStream(t, c)
	tp, err := c.CreateTopic(testCtx(t), ID(s.ID), name, partitions, TopicOptions{})
	if err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	return s, tp
}

func wantCode(t *testing.T, what string, err error, codes ...uint32) {
	t.Helper()
	if !IsCode(err, codes...) {
		t.Fatalf("%s: got %v, want Iggy error %v", what, err, codes)
	}
	if errors.Is(err, ErrConnection) {
		t.Fatalf("%s: server rejection %v matches ErrConnection", what, err)
	}
}

func TestConformanceSystem(t *testing.T) {
	b := testBackend(t)
	c := dialTest(t, b)
	ctx := testCtx(t)
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	me, err := c.GetMe(ctx)
	if err != nil {
		t.Fatalf("GetMe: %v", err)
	}
	if me.Address == "" {
		t.Errorf("GetMe address empty: %+v", me)
	}
	root, err := c.GetUser(ctx, ID(me.UserID))
	if err != nil || root.Username != b.user {
		t.Fatalf("GetUser(me) = %+v, %v; want user %s", root, err, b.user)
	}
	md, err := c.GetClusterMetadata(ctx)
	if err != nil {
		t.Fatalf("GetClusterMetadata: %v", err)
	}
	if len(md.Nodes) == 0 || md.Nodes[0].TCPPort == 0 {
		t.Fatalf("cluster metadata has no node with a TCP port: %+v", md)
	}
}

func TestConformanceLoginErrors(t *testing.T) {
	b := testBackend(t)
	ctx := testCtx(t)
	cfg := b.config()
	cfg.Password = "wrong-password"
	_, err := Dial(ctx, cfg)
	wantCode(t, "wrong password", err, CodeInvalidCredentials)

	cfg = b.config()
	cfg.Username = unique("nobody")
	_, err = Dial(ctx, cfg)
	wantCode(t, "unknown user", err, CodeInvalidCredentials)

	cfg = b.config()
	cfg.Username, cfg.Password, cfg.Token = "", "", "not-a-token"
	_, err = Dial(ctx, cfg)
	wantCode(t, "bad token", err, CodeInvalidPersonalAccessToken)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	cfg = b.config()
	cfg.Addr = closed
	if _, err = Dial(ctx, cfg); !errors.Is(err, ErrConnection) || MaybeApplied(err) {
		t.Fatalf("dial to a closed port: %v, want ErrConnection, not maybe-applied", err)
	}
}

func TestConformanceStreams(t *testing.T) {
	b := testBackend(t)
	c := dialTest(t, b)
	ctx := testCtx(t)
	name := unique("conf-stream")
	s, err := c.CreateStream(ctx, name)
	if err != nil {
		t.Fatalf("CreateStream: %v", err)
	}
	if s.Name != name || s.TopicsCount != 0 || s.CreatedAt == 0 {
		t.Fatalf("created %+v", s)
	}
	_, err = c.CreateStream(ctx, name)
	wantCode(t, "duplicate stream", err, CodeStreamNameAlreadyExists)

	byName, err := c.GetStream(ctx, Name(name))
	if err != nil || byName.ID != s.ID || byName.Name != name {
		t.Fatalf("GetStream(name) = %+v, %v", byName, err)
	}
	byID, err := c.GetStream(ctx, ID(s.ID))
	if err != nil || byID.Name != name {
		t.Fatalf("GetStream(id) = %+v, %v", byID, err)
	}
	all, err := c.GetStreams(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(all, func(x Stream) bool { return x.ID == s.ID && x.Name == name }) {
		t.Fatalf("GetStreams %+v lacks %s", all, name)
	}
	if err := c.DeleteStream(ctx, ID(s.ID)); err != nil {
		t.Fatalf("DeleteStream: %v", err)
	}
	_, err = c.GetStream(ctx, Name(name))
	wantCode(t, "deleted stream by name", err, CodeStreamNameNotFound)
	_, err = c.GetStream(ctx, ID(s.ID))
	wantCode(t, "deleted stream by id", err, CodeStreamIDNotFound)
	err = c.DeleteStream(ctx, Name(name))
	wantCode(t, "delete missing stream", err, CodeStreamNameNotFound, CodeStreamIDNotFound)
	_, err = c.CreateStream(ctx, "")
	if err == nil || IsCode(err) {
		t.Fatalf("empty stream name: %v, want a client-side error", err)
	}
}

func TestConformanceTopics(t *testing.T) {
	b := testBackend(t)
	c := dialTest(t, b)
	ctx := testCtx(t)
	s := newStream(t, c)
	sid := ID(s.ID)

	tp, err := c.CreateTopic(ctx, sid, "orders", 3, TopicOptions{MessageExpiry: 3_600_000_000, MaxTopicSize: 1 << 30})
	if err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	if tp.Name != "orders" || tp.PartitionsCount != 3 || len(tp.Partitions) != 3 {
		t.Fatalf("created %+v", tp)
	}
	for i, p := range tp.Partitions {
		// A 0.9 server's CreateTopic reply counts no segments yet.
		if p.ID != uint32(i) || p.MessagesCount != 0 || p.HighWatermark() != 0 || p.SegmentsCount != 0 {
			t.Errorf("partition %d = %+v", i, p)
		}
	}
	if tp.MessageExpiry != 3_600_000_000 || tp.MaxTopicSize != 1<<30 {
		t.Errorf("options not applied: expiry %d, max size %d", tp.MessageExpiry, tp.MaxTopicSize)
	}
	_, err = c.CreateTopic(ctx, sid, "orders", 1, TopicOptions{})
	wantCode(t, "duplicate topic", err, CodeTopicNameAlreadyExists)
	for _, o := range []struct{ key, value string }{
		// What the official Python SDK 0.9.0 sends on every create_topic; a 0.9 server refuses it.
		{"durability", "replicated"},
		{"consumer_offset_durability", "replicated"},
		{"no_such_option", "x"},
	} {
		body := wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: sid, PartitionsCount: 1, Name: unique("opt")})
		body = wire.AppendOption(body, o.key, HeaderString, []byte(o.value))
		err := c.do(ctx, wire.CodeCreateTopic, body, nil)
		wantCode(t, "CreateTopic with option "+o.key, err, CodeUnsupportedOptionKey)
	}
	_, err = c.CreateTopic(ctx, Name(unique("missing")), "t", 1, TopicOptions{})
	wantCode(t, "topic in missing stream", err, CodeStreamIDNotFound, CodeStreamNameNotFound)

	got, err := c.GetTopic(ctx, sid, Name("orders"))
	if err != nil || got.ID != tp.ID || len(got.Partitions) != 3 {
		t.Fatalf("GetTopic = %+v, %v", got, err)
	}
	_, err = c.GetTopic(ctx, sid, Name("nope"))
	wantCode(t, "missing topic by name", err, CodeTopicNameNotFound)
	_, err = c.GetTopic(ctx, sid, ID(999))
	wantCode(t, "missing topic by id", err, CodeTopicIDNotFound)
	_, err = c.GetTopic(ctx, Name(unique("missing")), Name("orders"))
	wantCode(t, "topic of missing stream", err, CodeTopicNameNotFound) // an empty reply, as for a missing topic

	if _, err := c.CreateTopic(ctx, sid, "second", 1, TopicOptions{}); err != nil {
		t.Fatal(err)
	}
	topics, err := c.GetTopics(ctx, sid)
	if err != nil || len(topics) != 2 {
		t.Fatalf("GetTopics = %+v, %v", topics, err)
	}
	names := []string{topics[0].Name, topics[1].Name}
	sort.Strings(names)
	if names[0] != "orders" || names[1] != "second" {
		t.Fatalf("topic names %v", names)
	}

	if err := c.UpdateTopic(ctx, sid, ID(tp.ID), "orders-v2", TopicOptions{MessageExpiry: 7_200_000_000}); err != nil {
		t.Fatalf("UpdateTopic: %v", err)
	}
	got, err = c.GetTopic(ctx, sid, ID(tp.ID))
	if err != nil || got.Name != "orders-v2" || got.MessageExpiry != 7_200_000_000 || got.MaxTopicSize != 1<<30 {
		t.Fatalf("after update: %+v, %v", got, err)
	}
	if err := c.UpdateTopic(ctx, sid, ID(tp.ID), "", TopicOptions{MaxTopicSize: Never}); err != nil {
		t.Fatalf("UpdateTopic keeping the name: %v", err)
	}
	got, _ = c.GetTopic(ctx, sid, ID(tp.ID))
	if got.Name != "orders-v2" || got.MaxTopicSize != Never {
		t.Fatalf("after option-only update: %+v", got)
	}

	if err := c.CreatePartitions(ctx, sid, ID(tp.ID), 2); err != nil {
		t.Fatalf("CreatePartitions: %v", err)
	}
	got, _ = c.GetTopic(ctx, sid, ID(tp.ID))
	if got.PartitionsCount != 5 || got.Partitions[4].ID != 4 {
		t.Fatalf("after CreatePartitions: %+v", got)
	}
	if err := c.DeletePartitions(ctx, sid, ID(tp.ID), 1); err != nil {
		t.Fatalf("DeletePartitions: %v", err)
	}
	got, _ = c.GetTopic(ctx, sid, ID(tp.ID))
	if got.PartitionsCount != 4 || got.Partitions[3].ID != 3 {
		t.Fatalf("after DeletePartitions: %+v", got)
	}

	if err := c.DeleteTopic(ctx, sid, ID(tp.ID)); err != nil {
		t.Fatalf("DeleteTopic: %v", err)
	}
	_, err = c.GetTopic(ctx, sid, ID(tp.ID))
	wantCode(t, "deleted topic", err, CodeTopicIDNotFound)
	err = c.DeleteTopic(ctx, sid, Name("orders-v2"))
	wantCode(t, "delete missing topic", err, CodeTopicIDNotFound, CodeTopicNameNotFound)
}

func header(k, v string) []byte {
	return AppendHeader(nil, HeaderString, []byte(k), HeaderString, []byte(v))
}

func headersOf(t *testing.T, block []byte) map[string]string {
	t.Helper()
	m := map[string]string{}
	if err := ParseHeaders(block, func(_ uint8, k []byte, _ uint8, v []byte) bool {
		m[string(k)] = string(v)
		return true
	}); err != nil {
		t.Fatalf("ParseHeaders: %v", err)
	}
	return m
}

func TestConformanceMessages(t *testing.T) {
	c := dialTest(t, testBackend(t))
	ctx := testCtx(t)
	s, tp := newTopic(t, c, "events", 2)
	sid, tid := ID(s.ID), ID(tp.ID)
	base := uint64(time.Now().Add(-time.Minute).UnixMicro())
	msgs := []Message{
		{Payload: []byte("zero"), OriginTimestamp: base, Headers: header("k", "v0")},
		{Payload: []byte("one"), OriginTimestamp: base + 10, ID: [16]byte{0xab}},
		{Payload: bytes.Repeat([]byte("2"), 5000), OriginTimestamp: base + 5, Headers: append(header("a", "1"), header("b", "2")...)},
	}
	conf, err := c.SendMessages(ctx, sid, tid, 1, msgs)
	if err != nil {
		t.Fatalf("SendMessages: %v", err)
	}
	if conf.BaseOffset != 0 || conf.PartitionID != 1 || conf.StreamID != s.ID || conf.TopicID != tp.ID {
		t.Fatalf("confirmation %+v", conf)
	}

	batch := NewBatch(0)
	for i := range 2 {
		if err := batch.Add(base+100+uint64(i), []byte{'b', byte('0' + i)}, header("batch", "yes")); err != nil {
			t.Fatal(err)
		}
	}
	conf, err = c.SendBatch(ctx, sid, tid, 1, batch)
	if err != nil || conf.BaseOffset != 3 {
		t.Fatalf("SendBatch = %+v, %v; want base offset 3", conf, err)
	}

	one := uint32(1)
	consumer := Consumer{Kind: ConsumerKindConsumer, ID: Name(unique("reader"))}
	poll := func(kind uint8, value uint64, count uint32) *Polled {
		t.Helper()
		p, err := c.PollMessages(ctx, PollRequest{Consumer: consumer, Stream: sid, Topic: tid, Partition: &one,
			Strategy: PollingStrategy{Kind: kind, Value: value}, Count: count})
		if err != nil {
			t.Fatalf("PollMessages(kind %d, value %d): %v", kind, value, err)
		}
		return p
	}
	p := poll(PollOffset, 0, 100)
	if p.PartitionID != 1 || p.CurrentOffset != 4 || len(p.Messages) != 5 {
		t.Fatalf("poll from 0: partition %d current %d, %d messages", p.PartitionID, p.CurrentOffset, len(p.Messages))
	}
	wantPayloads := []string{"zero", "one", strings.Repeat("2", 5000), "b0", "b1"}
	wantOrigins := []uint64{base, base + 10, base + 5, base + 100, base + 101}
	for i, m := range p.Messages {
		if m.Offset != uint64(i) || string(m.Payload) != wantPayloads[i] || m.OriginTimestamp != wantOrigins[i] {
			t.Errorf("message %d: offset %d payload %.10q origin %d", i, m.Offset, m.Payload, m.OriginTimestamp)
		}
		if m.Timestamp == 0 || m.Timestamp < base {
			t.Errorf("message %d: server timestamp %d", i, m.Timestamp)
		}
	}
	if h := headersOf(t, p.Messages[0].Headers); h["k"] != "v0" || len(h) != 1 {
		t.Errorf("headers of message 0: %v", h)
	}
	if h := headersOf(t, p.Messages[2].Headers); h["a"] != "1" || h["b"] != "2" {
		t.Errorf("headers of message 2: %v", h)
	}
	if len(p.Messages[1].Headers) != 0 || p.Messages[1].ID != [16]byte{0xab} {
		t.Errorf("message 1: headers %x id %x", p.Messages[1].Headers, p.Messages[1].ID)
	}
	if h := headersOf(t, p.Messages[4].Headers); h["batch"] != "yes" {
		t.Errorf("headers of message 4: %v", h)
	}

	if p := poll(PollOffset, 2, 2); len(p.Messages) != 2 || p.Messages[0].Offset != 2 || p.Messages[1].Offset != 3 {
		t.Errorf("poll offset 2 count 2: %+v", offsetsOf(p))
	}
	if p := poll(PollFirst, 0, 1); len(p.Messages) != 1 || p.Messages[0].Offset != 0 {
		t.Errorf("poll first: %v", offsetsOf(p))
	}
	if p := poll(PollLast, 0, 2); !slices.Equal(offsetsOf(p), []uint64{3, 4}) {
		t.Errorf("poll last 2: %v", offsetsOf(p))
	}
	if p := poll(PollTimestamp, p.Messages[3].Timestamp, 10); len(p.Messages) == 0 || p.Messages[len(p.Messages)-1].Offset != 4 {
		t.Errorf("poll by timestamp: %v", offsetsOf(p))
	}
	if p := poll(PollOffset, 5, 10); len(p.Messages) != 0 || p.CurrentOffset != 4 {
		t.Errorf("poll past the end: %v, current %d", offsetsOf(p), p.CurrentOffset)
	}
	if p := poll(PollNext, 0, 2); !slices.Equal(offsetsOf(p), []uint64{0, 1}) {
		t.Errorf("poll next without a stored offset: %v", offsetsOf(p))
	}

	got, err := c.GetTopic(ctx, sid, tid)
	if err != nil {
		t.Fatal(err)
	}
	if part := got.Partitions[1]; part.MessagesCount != 5 || part.CurrentOffset != 4 || part.HighWatermark() != 5 {
		t.Errorf("partition 1 after sends: %+v", part)
	}
	if got.Partitions[0].MessagesCount != 0 || got.MessagesCount != 5 {
		t.Errorf("topic counts: %+v", got)
	}

	nine := uint32(9)
	_, err = c.PollMessages(ctx, PollRequest{Consumer: consumer, Stream: sid, Topic: tid, Partition: &nine, Strategy: PollingStrategy{Kind: PollFirst}, Count: 1})
	wantCode(t, "poll missing partition", err, CodePartitionNotFound)
	_, err = c.PollMessages(ctx, PollRequest{Consumer: consumer, Stream: sid, Topic: Name("nope"), Partition: &one, Strategy: PollingStrategy{Kind: PollFirst}, Count: 1})
	wantCode(t, "poll missing topic", err, CodeTopicNameNotFound, CodeTopicIDNotFound)
	// Partition-plane requests whose stream does not resolve are denied with ResourceNotFound
	// (dispatch_partition_request).
	_, err = c.SendMessages(ctx, Name(unique("missing")), tid, 0, msgs[:1])
	wantCode(t, "send to missing stream", err, CodeResourceNotFound)
	_, err = c.SendMessages(ctx, sid, tid, 7, msgs[:1])
	wantCode(t, "send to missing partition", err, CodeResourceNotFound)
	if _, err = c.SendMessages(ctx, sid, tid, 0, []Message{{Payload: nil}}); err == nil || IsCode(err) {
		t.Errorf("empty payload: %v, want a client-side error", err)
	}

	if err := c.PurgeTopic(ctx, sid, tid); err != nil {
		t.Fatalf("PurgeTopic: %v", err)
	}
	if p := poll(PollFirst, 0, 10); len(p.Messages) != 0 {
		t.Errorf("poll after purge: %v", offsetsOf(p))
	}
}

func offsetsOf(p *Polled) []uint64 {
	var o []uint64
	for _, m := range p.Messages {
		o = append(o, m.Offset)
	}
	return o
}

func TestConformanceConsumerOffsets(t *testing.T) {
	c := dialTest(t, testBackend(t))
	ctx := testCtx(t)
	s, tp := newTopic(t, c, "offsets", 2)
	sid, tid := ID(s.ID), ID(tp.ID)
	zero, one := uint32(0), uint32(1)
	consumer := Consumer{Kind: ConsumerKindConsumer, ID: Name(unique("kafka-group"))}

	o, err := c.GetConsumerOffset(ctx, consumer, sid, tid, &zero)
	if err != nil || o != nil {
		t.Fatalf("offset before any store: %+v, %v", o, err)
	}
	err = c.StoreConsumerOffset(ctx, consumer, sid, tid, &one, 0)
	wantCode(t, "store on an empty partition", err, CodeInvalidOffset)

	msgs := make([]Message, 5)
	for i := range msgs {
		msgs[i].Payload = []byte{byte(i)}
	}
	if _, err := c.SendMessages(ctx, sid, tid, 0, msgs); err != nil {
		t.Fatal(err)
	}
	if err := c.StoreConsumerOffset(ctx, consumer, sid, tid, &zero, 2); err != nil {
		t.Fatalf("StoreConsumerOffset: %v", err)
	}
	o, err = c.GetConsumerOffset(ctx, consumer, sid, tid, &zero)
	if err != nil || o == nil || o.StoredOffset != 2 || o.CurrentOffset != 4 || o.PartitionID != 0 {
		t.Fatalf("GetConsumerOffset = %+v, %v", o, err)
	}
	err = c.StoreConsumerOffset(ctx, consumer, sid, tid, &zero, 5)
	wantCode(t, "store past the end", err, CodeInvalidOffset)

	p, err := c.PollMessages(ctx, PollRequest{Consumer: consumer, Stream: sid, Topic: tid, Partition: &zero,
		Strategy: PollingStrategy{Kind: PollNext}, Count: 10, AutoCommit: true})
	if err != nil || !slices.Equal(offsetsOf(p), []uint64{3, 4}) {
		t.Fatalf("poll next after stored 2: %v, %v", offsetsOf(p), err)
	}
	o, _ = c.GetConsumerOffset(ctx, consumer, sid, tid, &zero)
	if o == nil || o.StoredOffset != 4 {
		t.Fatalf("auto commit did not store 4: %+v", o)
	}

	other := Consumer{Kind: ConsumerKindConsumer, ID: Name(unique("other"))}
	if o, err := c.GetConsumerOffset(ctx, other, sid, tid, &zero); err != nil || o != nil {
		t.Fatalf("offsets leak between consumers: %+v, %v", o, err)
	}
	if err := c.DeleteConsumerOffset(ctx, consumer, sid, tid, &zero); err != nil {
		t.Fatalf("DeleteConsumerOffset: %v", err)
	}
	if o, err := c.GetConsumerOffset(ctx, consumer, sid, tid, &zero); err != nil || o != nil {
		t.Fatalf("offset after delete: %+v, %v", o, err)
	}
	// The server answers an unresolvable topic with an empty body, like "nothing stored"
	// (handle_get_consumer_offset), but a missing partition with PartitionNotFound.
	if o, err := c.GetConsumerOffset(ctx, consumer, sid, Name("nope"), &zero); err != nil || o != nil {
		t.Fatalf("offset of missing topic: %+v, %v", o, err)
	}
	seven := uint32(7)
	_, err = c.GetConsumerOffset(ctx, consumer, sid, tid, &seven)
	wantCode(t, "offset of missing partition", err, CodePartitionNotFound)
}

func TestConformanceConsumerGroups(t *testing.T) {
	c := dialTest(t, testBackend(t))
	ctx := testCtx(t)
	s, tp := newTopic(t, c, "grouped", 4)
	sid, tid := ID(s.ID), ID(tp.ID)
	g, err := c.CreateConsumerGroup(ctx, sid, tid, "workers")
	if err != nil {
		t.Fatalf("CreateConsumerGroup: %v", err)
	}
	if g.Name != "workers" || g.PartitionsCount != 4 || g.MembersCount != 0 {
		t.Fatalf("created group %+v", g)
	}
	_, err = c.CreateConsumerGroup(ctx, sid, tid, "workers")
	wantCode(t, "duplicate group", err, CodeConsumerGroupNameAlreadyExists)
	_, err = c.GetConsumerGroup(ctx, sid, tid, Name("nope"))
	wantCode(t, "missing group by name", err, CodeConsumerGroupNameNotFound)
	_, err = c.GetConsumerGroup(ctx, sid, tid, ID(99))
	wantCode(t, "missing group by id", err, CodeConsumerGroupIDNotFound)

	gid := ID(g.ID)
	m1, rel1, err := c.Acquire(ctx)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	defer rel1()
	m2, rel2, err := c.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rel2()
	if m1.Session() == m2.Session() {
		t.Fatal("acquired connections share a session")
	}
	if err := m1.JoinConsumerGroup(ctx, sid, tid, gid); err != nil {
		t.Fatalf("Join 1: %v", err)
	}
	if err := m2.JoinConsumerGroup(ctx, sid, tid, gid); err != nil {
		t.Fatalf("Join 2: %v", err)
	}
	got, err := c.GetConsumerGroup(ctx, sid, tid, gid)
	if err != nil || got.MembersCount != 2 || len(got.Members) != 2 {
		t.Fatalf("group after joins: %+v, %v", got, err)
	}
	var all []uint32
	for _, m := range got.Members {
		if len(m.Partitions) != 2 {
			t.Errorf("member %d owns %v, want 2 of 4 partitions", m.ID, m.Partitions)
		}
		all = append(all, m.Partitions...)
	}
	slices.Sort(all)
	if !slices.Equal(all, []uint32{0, 1, 2, 3}) {
		t.Fatalf("members own %v, want every partition once", all)
	}
	groups, err := c.GetConsumerGroups(ctx, sid, tid)
	if err != nil || len(groups) != 1 || groups[0].MembersCount != 2 || groups[0].Name != "workers" {
		t.Fatalf("GetConsumerGroups = %+v, %v", groups, err)
	}
	me, err := m1.GetMe(ctx)
	if err != nil || len(me.ConsumerGroups) != 1 || me.ConsumerGroups[0].GroupID != g.ID || me.ConsumerGroups[0].TopicID != tp.ID {
		t.Fatalf("GetMe of a member: %+v, %v", me, err)
	}

	a, err := m1.SyncConsumerGroup(ctx, sid, tid, gid)
	if err != nil || len(a.Partitions) != 2 {
		t.Fatalf("SyncConsumerGroup = %+v, %v", a, err)
	}
	if _, err := c.SendMessages(ctx, sid, tid, a.Partitions[0], []Message{{Payload: []byte("for the group")}}); err != nil {
		t.Fatal(err)
	}
	owned := a.Partitions[0]
	gc := Consumer{Kind: ConsumerKindGroup, ID: gid}
	p, err := m1.PollMessages(ctx, PollRequest{Consumer: gc, Stream: sid, Topic: tid, Partition: &owned,
		Strategy: PollingStrategy{Kind: PollNext}, Count: 10, AutoCommit: true})
	if err != nil || len(p.Messages) != 1 || string(p.Messages[0].Payload) != "for the group" {
		t.Fatalf("group poll: %+v, %v", p, err)
	}
	if err := m1.StoreConsumerOffset(ctx, gc, sid, tid, &owned, 0); err != nil {
		t.Fatalf("group offset store: %v", err)
	}

	if err := m2.LeaveConsumerGroup(ctx, sid, tid, gid); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	got, _ = c.GetConsumerGroup(ctx, sid, tid, gid)
	if got.MembersCount != 1 || len(got.Members[0].Partitions) != 4 {
		t.Fatalf("after leave: %+v", got)
	}
	rel1() // closing the session ends its membership
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _ = c.GetConsumerGroup(ctx, sid, tid, gid)
		if got.MembersCount == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got.MembersCount != 0 {
		t.Fatalf("membership survived logout: %+v", got)
	}
	if err := c.DeleteConsumerGroup(ctx, sid, tid, gid); err != nil {
		t.Fatalf("DeleteConsumerGroup: %v", err)
	}
	err = c.DeleteConsumerGroup(ctx, sid, tid, gid)
	wantCode(t, "delete missing group", err, CodeConsumerGroupIDNotFound)
}

func TestConformanceUsers(t *testing.T) {
	b := testBackend(t)
	c := dialTest(t, b)
	ctx := testCtx(t)
	s := newStream(t, c)
	name := unique("user")
	perms := &Permissions{
		Global: GlobalPermissions{ReadStreams: true, ReadTopics: true},
		Streams: []StreamPermissions{{StreamID: s.ID, ReadStream: true, PollMessages: true, SendMessages: true,
			Topics: []TopicPermissions{{TopicID: 0, ReadTopic: true, PollMessages: true}}}},
	}
	u, err := c.CreateUser(ctx, name, "secret-1", UserActive, perms)
	if err != nil {
		t.Fatalf("CreateUser: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.DeleteUser(ctx, Name(name))
	})
	if u.Username != name || u.Status != UserActive {
		t.Fatalf("created %+v", u)
	}
	_, err = c.CreateUser(ctx, name, "secret-1", UserActive, nil)
	wantCode(t, "duplicate user", err, CodeUserAlreadyExists)

	got, err := c.GetUser(ctx, Name(name))
	if err != nil || got.ID != u.ID || !equalPerms(got.Permissions, perms) {
		t.Fatalf("GetUser = %+v (%+v), %v", got, got.Permissions, err)
	}
	users, err := c.GetUsers(ctx)
	if err != nil || !slices.ContainsFunc(users, func(x User) bool { return x.Username == name }) {
		t.Fatalf("GetUsers lacks %s: %+v, %v", name, users, err)
	}

	vu, err := VerifyLogin(ctx, b.config(), name, "secret-1")
	if err != nil || vu.ID != u.ID || !equalPerms(vu.Permissions, perms) {
		t.Fatalf("VerifyLogin = %+v, %v", vu, err)
	}
	_, err = VerifyLogin(ctx, b.config(), name, "wrong-one")
	wantCode(t, "VerifyLogin with a wrong password", err, CodeInvalidCredentials)

	perms2 := &Permissions{Global: GlobalPermissions{SendMessages: true}}
	if err := c.UpdatePermissions(ctx, ID(u.ID), perms2); err != nil {
		t.Fatalf("UpdatePermissions: %v", err)
	}
	if got, _ := c.GetUser(ctx, ID(u.ID)); !equalPerms(got.Permissions, perms2) {
		t.Fatalf("permissions after update: %+v", got.Permissions)
	}
	if err := c.ChangePassword(ctx, ID(u.ID), "secret-1", "secret-2"); err != nil {
		t.Fatalf("ChangePassword: %v", err)
	}
	_, err = VerifyLogin(ctx, b.config(), name, "secret-1")
	wantCode(t, "old password", err, CodeInvalidCredentials)
	if _, err := VerifyLogin(ctx, b.config(), name, "secret-2"); err != nil {
		t.Fatalf("new password: %v", err)
	}

	// The user can only do what its permissions allow.
	uc, err := Dial(ctx, Config{Addr: b.addr, Username: name, Password: "secret-2", PoolSize: 1, PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	_, err = uc.CreateStream(ctx, unique("denied"))
	wantCode(t, "create stream without permission", err, CodeUnauthorized)

	inactive := unique("inactive")
	if _, err := c.CreateUser(ctx, inactive, "secret-3", UserInactive, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteUser(context.Background(), Name(inactive)) })
	_, err = VerifyLogin(ctx, b.config(), inactive, "secret-3")
	wantCode(t, "inactive user", err, CodeUserInactive, CodeInvalidCredentials)

	if err := c.DeleteUser(ctx, ID(u.ID)); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	_, err = c.GetUser(ctx, ID(u.ID))
	wantCode(t, "deleted user", err, CodeResourceNotFound)
}

func equalPerms(a, b *Permissions) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Global != b.Global || len(a.Streams) != len(b.Streams) {
		return false
	}
	for i := range a.Streams {
		x, y := a.Streams[i], b.Streams[i]
		if !slices.Equal(x.Topics, y.Topics) {
			return false
		}
		x.Topics, y.Topics = nil, nil
		if !equalStreamPerms(x, y) {
			return false
		}
	}
	return true
}

func equalStreamPerms(a, b StreamPermissions) bool {
	return a.StreamID == b.StreamID && a.ManageStream == b.ManageStream && a.ReadStream == b.ReadStream && a.ManageTopics == b.ManageTopics && a.ReadTopics == b.ReadTopics && a.PollMessages == b.PollMessages && a.SendMessages == b.SendMessages
}

func TestConformancePersonalAccessTokens(t *testing.T) {
	b := testBackend(t)
	c := dialTest(t, b)
	ctx := testCtx(t)
	name := unique("pat")
	token, err := c.CreatePAT(ctx, name, 0)
	if err != nil || token == "" {
		t.Fatalf("CreatePAT = %q, %v", token, err)
	}
	t.Cleanup(func() { _ = c.DeletePAT(context.Background(), name) })
	_, err = c.CreatePAT(ctx, name, 0)
	wantCode(t, "duplicate token name", err, CodePersonalAccessTokenAlreadyExists)
	pats, err := c.GetPATs(ctx)
	if err != nil || !slices.ContainsFunc(pats, func(p PersonalAccessToken) bool { return p.Name == name }) {
		t.Fatalf("GetPATs = %+v, %v", pats, err)
	}

	tc, err := Dial(ctx, Config{Addr: b.addr, Token: token, PoolSize: 1, PingInterval: -1})
	if err != nil {
		t.Fatalf("Dial with token: %v", err)
	}
	me, err := tc.GetMe(ctx)
	tc.Close()
	root, _ := c.GetMe(ctx)
	if err != nil || me.UserID != root.UserID {
		t.Fatalf("token login is user %+v, %v; want %d", me, err, root.UserID)
	}

	if err := c.DeletePAT(ctx, name); err != nil {
		t.Fatalf("DeletePAT: %v", err)
	}
	if pats, _ := c.GetPATs(ctx); slices.ContainsFunc(pats, func(p PersonalAccessToken) bool { return p.Name == name }) {
		t.Fatal("deleted token still listed")
	}
	_, err = Dial(ctx, Config{Addr: b.addr, Token: token, PoolSize: 1, PingInterval: -1})
	wantCode(t, "login with a deleted token", err, CodeInvalidPersonalAccessToken)
}

// proxy forwards TCP connections to a backend and can cut them all, which looks to the client
// like the server dropping the connection, whichever server is behind it; or swallow the next
// request a client sends and then cut, like a server dying while it holds that request.
type proxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	conns   []net.Conn
	swallow atomic.Bool
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go p.forward(in, out)
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	return p
}

// forward copies what the client sends to the server until swallow is set: the next bytes
// are then dropped and both sides closed.
func (p *proxy) forward(in, out net.Conn) {
	defer out.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 && p.swallow.CompareAndSwap(true, false) {
			in.Close()
			return
		}
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func TestConformanceReconnect(t *testing.T) {
	b := testBackend(t)
	px := startProxy(t, b.addr)
	cfg := b.config()
	cfg.Addr = px.ln.Addr().String()
	cfg.PoolSize = 1
	cfg.PingInterval = -1 // no ping may take the place of the request the proxy swallows
	ctx := testCtx(t)
	cn, err := DialConn(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	admin := dialTest(t, b)
	s, _ := newTopic(t, admin, "t", 1)
	before := cn.Session()

	// A read after the server dropped the connection is replayed on a new session.
	px.cut()
	got, err := cn.GetStream(ctx, ID(s.ID))
	if err != nil || got.Name != s.Name {
		t.Fatalf("GetStream after the connection dropped: %+v, %v", got, err)
	}
	if after := cn.Session(); after == before || after == 0 {
		t.Fatalf("session %d after reconnect, was %d", after, before)
	}

	// A send on a connection the server closed while it was idle goes out on a new session:
	// it was never written, so it cannot have landed.
	px.cut()
	awaitPeerClosed(t, cn)
	conf, err := cn.SendMessages(ctx, ID(s.ID), Name("t"), 0, []Message{{Payload: []byte("x")}})
	if err != nil || conf.BaseOffset != 0 {
		t.Fatalf("send after an idle connection was dropped: %+v, %v", conf, err)
	}

	// A send whose connection dropped after it was written may have landed: it is not replayed.
	px.swallow.Store(true)
	_, err = cn.SendMessages(ctx, ID(s.ID), Name("t"), 0, []Message{{Payload: []byte("y")}})
	if !errors.Is(err, ErrConnection) || !MaybeApplied(err) || IsCode(err) {
		t.Fatalf("send on a connection dropped mid-request: %v, want a maybe-applied ErrConnection", err)
	}
	conf, err = cn.SendMessages(ctx, ID(s.ID), Name("t"), 0, []Message{{Payload: []byte("z")}})
	if err != nil || conf.BaseOffset != 1 {
		t.Fatalf("send after reconnect: %+v, %v (the dropped send must not have been replayed)", conf, err)
	}

	// A metadata write is replayed too.
	px.cut()
	if _, err := cn.CreateTopic(ctx, ID(s.ID), "after-drop", 1, TopicOptions{}); err != nil {
		t.Fatalf("CreateTopic after the connection dropped: %v", err)
	}
}

func TestConformanceContext(t *testing.T) {
	b := testBackend(t)
	c := dialTest(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.Ping(ctx)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrConnection) {
		t.Fatalf("Ping with a cancelled context: %v", err)
	}
	if err := c.Ping(testCtx(t)); err != nil {
		t.Fatalf("Ping after a cancelled call: %v", err)
	}
	c.Close()
	if err := c.Ping(testCtx(t)); !errors.Is(err, ErrClosed) || !errors.Is(err, ErrConnection) {
		t.Fatalf("Ping after Close: %v", err)
	}
}
