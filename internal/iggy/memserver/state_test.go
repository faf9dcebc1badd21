package memserver

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

func testState(t *testing.T) (*state, *session) {
	t.Helper()
	s := newState(time.Now, "iggy", "iggy")
	uid, ok := s.authenticate("iggy", "iggy")
	if !ok {
		t.Fatal("root login failed")
	}
	return s, s.openSession(uid, [16]byte{1}, "127.0.0.1:1")
}

func name(s string) wire.Identifier { return wire.Identifier{Name: s} }
func id(n uint32) wire.Identifier   { return wire.Identifier{Numeric: n} }
func ptr[T any](v T) *T             { return &v }

// mustTopic creates stream "s" and topic "t" with n partitions.
func mustTopic(t *testing.T, s *state, sess *session, n uint32) {
	t.Helper()
	if _, err := s.createStream(sess, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.createTopic(sess, name("s"), "t", n, topicSettings{}); err != nil {
		t.Fatal(err)
	}
}

// send appends n messages with payloads "<prefix>-i" to partition p.
func send(t *testing.T, s *state, sess *session, p uint32, prefix string, n int) uint64 {
	t.Helper()
	b := wire.NewBatch(0)
	for i := range n {
		if err := b.Add(0, fmt.Appendf(nil, "%s-%d", prefix, i), nil); err != nil {
			t.Fatal(err)
		}
	}
	data := slices.Clone(b.Bytes())
	conf, err := s.sendMessages(sess, name("s"), name("t"), partitioning{kind: wire.PartitioningPartitionID, id: p}, data, uint32(n))
	if err != nil {
		t.Fatal(err)
	}
	return conf.BaseOffset
}

// payloads decodes the payloads a poll selected, with their offsets.
func payloads(t *testing.T, out polled) (offs []uint64, pls []string) {
	t.Helper()
	body, err := appendSpans(nil, out.spans)
	if err != nil {
		t.Fatal(err)
	}
	for len(body) > 0 {
		h, rec, rest, err := wire.SplitBatch(body)
		if err != nil {
			t.Fatal(err)
		}
		err = wire.WalkFrames(&h, rec, true, func(f wire.Frame) error {
			offs = append(offs, h.BaseOffset+uint64(f.OffsetDelta))
			pls = append(pls, string(f.Payload))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		body = rest
	}
	return offs, pls
}

func TestPollStrategies(t *testing.T) {
	s, sess := testState(t)
	now := time.Now()
	s.clock = func() time.Time { return now } // the two sends are stamped 2ms apart
	mustTopic(t, s, sess, 1)
	send(t, s, sess, 0, "a", 3) // offsets 0..2, stamped a few µs after now (stamps never repeat)
	mid := uint64(now.Add(time.Millisecond).UnixMicro())
	now = now.Add(2 * time.Millisecond)
	send(t, s, sess, 0, "b", 3) // offsets 3..5
	consumer := wire.Consumer{Kind: wire.ConsumerKindConsumer, ID: id(7)}

	for _, tc := range []struct {
		name     string
		strategy wire.PollingStrategy
		count    uint32
		want     []uint64
	}{
		{"offset inside a batch", wire.PollingStrategy{Kind: wire.PollOffset, Value: 1}, 3, []uint64{1, 2, 3}},
		{"offset past the end", wire.PollingStrategy{Kind: wire.PollOffset, Value: 6}, 3, nil},
		{"first", wire.PollingStrategy{Kind: wire.PollFirst}, 2, []uint64{0, 1}},
		{"last", wire.PollingStrategy{Kind: wire.PollLast}, 2, []uint64{4, 5}},
		{"last more than stored", wire.PollingStrategy{Kind: wire.PollLast}, 10, []uint64{0, 1, 2, 3, 4, 5}},
		{"timestamp", wire.PollingStrategy{Kind: wire.PollTimestamp, Value: mid}, 10, []uint64{3, 4, 5}},
		{"count zero", wire.PollingStrategy{Kind: wire.PollFirst}, 0, nil},
		{"next without stored offset", wire.PollingStrategy{Kind: wire.PollNext}, 1, []uint64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := s.pollMessages(sess, wire.PollRequest{Consumer: consumer, Stream: name("s"), Topic: name("t"), Strategy: tc.strategy, Count: tc.count})
			if err != nil {
				t.Fatal(err)
			}
			offs, _ := payloads(t, out)
			if !slices.Equal(offs, tc.want) || out.count != uint32(len(tc.want)) || out.currentOffset != 5 {
				t.Fatalf("offsets %v count %d current %d, want %v current 5", offs, out.count, out.currentOffset, tc.want)
			}
		})
	}
}

func TestPollNextWithAutoCommit(t *testing.T) {
	s, sess := testState(t)
	mustTopic(t, s, sess, 1)
	send(t, s, sess, 0, "m", 5)
	req := wire.PollRequest{
		Consumer: wire.Consumer{Kind: wire.ConsumerKindConsumer, ID: name("c")},
		Stream:   name("s"), Topic: name("t"),
		Strategy: wire.PollingStrategy{Kind: wire.PollNext}, Count: 2, AutoCommit: true,
	}
	var got []string
	for range 4 {
		out, err := s.pollMessages(sess, req)
		if err != nil {
			t.Fatal(err)
		}
		_, pls := payloads(t, out)
		got = append(got, pls...)
	}
	if want := []string{"m-0", "m-1", "m-2", "m-3", "m-4"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	o, found, err := s.getOffset(sess, req.Consumer, name("s"), name("t"), nil)
	if err != nil || !found || o.StoredOffset != 4 || o.CurrentOffset != 4 {
		t.Fatalf("offset %+v found %v err %v", o, found, err)
	}
}

func TestPollErrors(t *testing.T) {
	s, sess := testState(t)
	mustTopic(t, s, sess, 2)
	consumer := wire.Consumer{Kind: wire.ConsumerKindConsumer, ID: id(1)}
	first := wire.PollingStrategy{Kind: wire.PollFirst}
	for _, tc := range []struct {
		name string
		req  wire.PollRequest
		code uint32 // 0: an empty poll with partition emptyPart
		part uint32
	}{
		{"missing stream", wire.PollRequest{Consumer: consumer, Stream: name("x"), Topic: name("t"), Strategy: first, Count: 1}, codeStreamIDNotFound, 0},
		{"missing topic", wire.PollRequest{Consumer: consumer, Stream: name("s"), Topic: name("x"), Strategy: first, Count: 1}, codeTopicIDNotFound, 0},
		{"missing partition", wire.PollRequest{Consumer: consumer, Stream: name("s"), Topic: name("t"), Partition: ptr[uint32](9), Strategy: first, Count: 1}, codePartitionNotFound, 0},
		{"bad strategy", wire.PollRequest{Consumer: consumer, Stream: name("s"), Topic: name("t"), Strategy: wire.PollingStrategy{Kind: 9}, Count: 1}, 0, 0},
		{"group without partition", wire.PollRequest{Consumer: wire.Consumer{Kind: wire.ConsumerKindGroup, ID: id(0)}, Stream: name("s"), Topic: name("t"), Strategy: first, Count: 1}, 0, 0},
		{"group not owned", wire.PollRequest{Consumer: wire.Consumer{Kind: wire.ConsumerKindGroup, ID: id(0)}, Stream: name("s"), Topic: name("t"), Partition: ptr[uint32](1), Strategy: first, Count: 1}, 0, resyncPartition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := s.pollMessages(sess, tc.req)
			switch {
			case tc.code != 0 && (err == nil || err.code != tc.code || err.rejected):
				t.Fatalf("err %v, want status %d", err, tc.code)
			case tc.code == 0 && (err != nil || out.partitionID != tc.part || out.count != 0):
				t.Fatalf("got %+v %v, want empty poll of partition %#x", out, err, tc.part)
			}
		})
	}
}

func TestConsumerOffsetRules(t *testing.T) {
	s, sess := testState(t)
	mustTopic(t, s, sess, 2)
	c := wire.Consumer{Kind: wire.ConsumerKindConsumer, ID: name("c")}
	store := func(p *uint32, off uint64) *opError {
		return s.storeOffset(sess, c, name("s"), name("t"), p, off)
	}
	if err := store(ptr[uint32](0), 0); err == nil || err.code != codeInvalidOffset {
		t.Fatalf("store on empty partition: %v", err)
	}
	send(t, s, sess, 0, "m", 3)
	if err := store(ptr[uint32](0), 3); err == nil || err.code != codeInvalidOffset {
		t.Fatalf("store past the end: %v", err)
	}
	if err := store(nil, 1); err == nil || err.code != codeResourceNotFound {
		t.Fatalf("store without partition: %v", err)
	}
	if err := store(ptr[uint32](5), 1); err == nil || err.code != codeResourceNotFound {
		t.Fatalf("store on missing partition: %v", err)
	}
	if err := store(ptr[uint32](0), 2); err != nil {
		t.Fatal(err)
	}
	o, found, err := s.getOffset(sess, c, name("s"), name("t"), nil)
	if err != nil || !found || o != (wire.ConsumerOffset{PartitionID: 0, CurrentOffset: 2, StoredOffset: 2}) {
		t.Fatalf("get: %+v %v %v", o, found, err)
	}
	if _, found, _ := s.getOffset(sess, c, name("s"), name("t"), ptr[uint32](1)); found {
		t.Fatal("offset found on a partition where none was stored")
	}
	if _, _, err := s.getOffset(sess, c, name("s"), name("t"), ptr[uint32](7)); err == nil || err.code != codePartitionNotFound {
		t.Fatalf("get on missing partition: %v", err)
	}
	if err := s.deleteOffset(sess, c, name("s"), name("t"), ptr[uint32](0)); err != nil {
		t.Fatal(err)
	}
	if err := s.deleteOffset(sess, c, name("s"), name("t"), ptr[uint32](0)); err == nil || err.code != codeConsumerOffsetNotFound {
		t.Fatalf("second delete: %v", err)
	}
}

func TestGroupAssignment(t *testing.T) {
	s, a := testState(t)
	b := s.openSession(0, [16]byte{2}, "b")
	c := s.openSession(0, [16]byte{3}, "c")
	mustTopic(t, s, a, 3)
	if _, err := s.createGroup(a, name("s"), name("t"), "g"); err != nil {
		t.Fatal(err)
	}
	sync := func(sess *session) []uint32 {
		asg, found := s.syncGroup(sess, name("s"), name("t"), name("g"))
		if !found {
			return nil
		}
		return asg.Partitions
	}
	join := func(sess *session) {
		if err := s.joinGroup(sess, name("s"), name("t"), name("g")); err != nil {
			t.Fatal(err)
		}
	}
	join(a)
	if got := sync(a); !slices.Equal(got, []uint32{0, 1, 2}) {
		t.Fatalf("single member owns %v", got)
	}
	join(b)
	if ga, gb := sync(a), sync(b); !slices.Equal(ga, []uint32{0, 1}) || !slices.Equal(gb, []uint32{2}) {
		t.Fatalf("after second join: a %v b %v", ga, gb)
	}
	join(c)
	if ga, gb, gc := sync(a), sync(b), sync(c); !slices.Equal(ga, []uint32{0}) || !slices.Equal(gb, []uint32{2}) || !slices.Equal(gc, []uint32{1}) {
		t.Fatalf("after third join: a %v b %v c %v", ga, gb, gc)
	}
	gen, _ := s.syncGroup(a, name("s"), name("t"), name("g"))

	s.closeSession(b) // disconnect releases membership and rebalances round-robin
	ga, gc := sync(a), sync(c)
	if !slices.Equal(ga, []uint32{0, 2}) || !slices.Equal(gc, []uint32{1}) {
		t.Fatalf("after disconnect: a %v c %v", ga, gc)
	}
	if now, _ := s.syncGroup(a, name("s"), name("t"), name("g")); now.Generation <= gen.Generation {
		t.Fatalf("generation %d did not advance past %d", now.Generation, gen.Generation)
	}
	if err := s.leaveGroup(b, name("s"), name("t"), name("g")); err == nil || err.code != codeConsumerGroupMemberNotFound || !err.rejected {
		t.Fatalf("leave by a non-member: %v", err)
	}
	if me := s.me(a); len(me.ConsumerGroups) != 1 || me.ConsumerGroups[0] != (wire.MeGroup{}) {
		t.Fatalf("GetMe groups %+v", me.ConsumerGroups)
	}
}

func TestIDsAreReused(t *testing.T) {
	s, sess := testState(t)
	for _, n := range []string{"a", "b", "c"} {
		if _, err := s.createStream(sess, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.deleteStream(sess, name("b")); err != nil {
		t.Fatal(err)
	}
	v, err := s.createStream(sess, "d")
	if err != nil || v.ID != 1 {
		t.Fatalf("new stream id %d (%v), want the freed id 1", v.ID, err)
	}
	if _, err := s.createStream(sess, "d"); err == nil || err.code != codeStreamNameAlreadyExists || !err.rejected {
		t.Fatalf("duplicate name: %v", err)
	}
}

func TestPermissions(t *testing.T) {
	s, root := testState(t)
	mustTopic(t, s, root, 1)
	readerPerms := &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: 0, Topics: []wire.TopicPermissions{{TopicID: 0, PollMessages: true}}}}}
	if _, err := s.createUser(root, "reader", "secret", wire.UserActive, readerPerms); err != nil {
		t.Fatal(err)
	}
	uid, ok := s.authenticate("reader", "secret")
	if !ok {
		t.Fatal("reader login failed")
	}
	reader := s.openSession(uid, [16]byte{9}, "r")

	if _, err := s.createStream(reader, "x"); err == nil || err.code != codeUnauthorized || !err.rejected {
		t.Fatalf("create stream: %v, want committed Unauthorized", err)
	}
	if _, err := s.getStreams(reader); err == nil || err.code != codeUnauthorized || err.rejected {
		t.Fatalf("get streams: %v, want status Unauthorized", err)
	}
	b := wire.NewBatch(0)
	_ = b.Add(0, []byte("x"), nil)
	if _, err := s.sendMessages(reader, id(0), id(0), partitioning{kind: wire.PartitioningPartitionID}, slices.Clone(b.Bytes()), 1); err == nil || err.code != codeUnauthorized {
		t.Fatalf("send: %v", err)
	}
	poll := wire.PollRequest{Consumer: wire.Consumer{Kind: 1, ID: id(1)}, Stream: id(0), Topic: id(0), Strategy: wire.PollingStrategy{Kind: wire.PollFirst}, Count: 1}
	if _, err := s.pollMessages(reader, poll); err != nil {
		t.Fatalf("poll with topic poll permission: %v", err)
	}
	if _, found, err := s.getUser(reader, name("reader")); err != nil || !found {
		t.Fatalf("users may read themselves: %v", err)
	}
	if _, _, err := s.getUser(reader, name("iggy")); err == nil || err.code != codeUnauthorized {
		t.Fatalf("read another user: %v", err)
	}
	if err := s.deleteUser(root, id(0)); err == nil || err.code != codeCannotDeleteUser {
		t.Fatalf("delete root: %v", err)
	}
	if err := s.changePassword(reader, name("reader"), "wrong", "next1"); err == nil || err.code != codeInvalidCredentials || !err.rejected {
		t.Fatalf("wrong current password: %v", err)
	}
	if err := s.changePassword(reader, name("reader"), "secret", "next1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.authenticate("reader", "next1"); !ok {
		t.Fatal("login with the new password failed")
	}
}

func TestPersonalAccessTokens(t *testing.T) {
	s, root := testState(t)
	token, err := s.createPAT(root, "ci", 0)
	if err != nil {
		t.Fatal(err)
	}
	if uid, res := s.authenticateToken(token); res != tokenOK || uid != 0 {
		t.Fatalf("token login: %d %d", uid, res)
	}
	if _, err := s.createPAT(root, "ci", 0); err == nil || err.code != codePATAlreadyExists {
		t.Fatalf("duplicate token name: %v", err)
	}
	if got := s.getPATs(root); len(got) != 1 || got[0].Name != "ci" || got[0].ExpiryAt != 0 {
		t.Fatalf("tokens %+v", got)
	}
	if err := s.deletePAT(root, "ci"); err != nil {
		t.Fatal(err)
	}
	if _, res := s.authenticateToken(token); res != tokenInvalid {
		t.Fatal("deleted token still logs in")
	}
}
