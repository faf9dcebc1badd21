package memserver

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
	"github.com/zeebo/xxh3"
)

func TestPingIsTheOnlyCommandBeforeLogin(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	c.request = 1
	if f := c.call(wire.CodePing, nil); f.reply.Status != 0 || len(f.body) != 0 {
		t.Fatalf("ping: status %d body %d bytes", f.reply.Status, len(f.body))
	}
	if f := c.call(wire.CodeGetStreams, nil); f.reply.Status != codeUnauthenticated {
		t.Fatalf("read before login: status %d, want 40", f.reply.Status)
	}
	c.session = 7
	c.write(c.header(wire.CodeCreateStream), wire.AppendCreateStream(nil, "s"))
	if f, ok := c.read(); !ok || f.command != wire.CommandEviction || f.eviction.Reason != wire.EvictNoSession {
		t.Fatalf("replicated request before login: %+v", f)
	}
	if _, ok := c.read(); ok {
		t.Fatal("connection still open after the eviction")
	}
}

func TestLoginFailuresEvict(t *testing.T) {
	srv := startServer(t)
	version := wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "test", SDKVersion: "1"}
	for _, tc := range []struct {
		name   string
		header wire.RequestHeader
		body   []byte
		reason uint8
	}{
		{"wrong password", wire.RequestHeader{Operation: wire.OpRegister}, loginBody("iggy", "nope"), wire.EvictInvalidCredentials},
		{"unknown user", wire.RequestHeader{Operation: wire.OpRegister}, loginBody("someone", "iggy"), wire.EvictInvalidCredentials},
		{"unknown token", wire.RequestHeader{Operation: wire.OpRegister}, wire.AppendLoginPAT(nil, version, "not-a-token"), wire.EvictInvalidToken},
		{"no version prefix", wire.RequestHeader{Operation: wire.OpRegister}, []byte{4, 'i', 'g', 'g', 'y'}, wire.EvictMalformedLogin},
		{"newer protocol", wire.RequestHeader{Operation: wire.OpRegister},
			wire.AppendLoginUser(nil, wire.ClientVersionInfo{ProtocolVersion: wire.PackVersion(0, 12, 0), SDKName: "x", SDKVersion: "1"}, "iggy", "iggy"),
			wire.EvictIncompatibleProtocol},
		{"legacy login code", wire.RequestHeader{Operation: wire.OpNonReplicated, Code: wire.CodeLoginUser, Request: 1}, nil, wire.EvictMalformedLogin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, srv.Addr())
			c.write(tc.header, tc.body)
			f, ok := c.read()
			if !ok || f.command != wire.CommandEviction || f.eviction.Reason != tc.reason || f.eviction.Client != c.client {
				t.Fatalf("got closed=%v %+v, want eviction %d", !ok, f.eviction, tc.reason)
			}
			if tc.reason == wire.EvictIncompatibleProtocol && f.eviction.ServerProtocolVersion != wire.ProtocolVersion {
				t.Fatalf("eviction advertises version %d", f.eviction.ServerProtocolVersion)
			}
			if _, ok := c.read(); ok {
				t.Fatal("connection still open after the eviction")
			}
		})
	}
}

func TestLoginReplyAndTokenLogin(t *testing.T) {
	srv, err := Start(Config{Addr: "127.0.0.1:0", RootUsername: "admin", RootPassword: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c := dialRaw(t, srv.Addr())
	c.login("admin", "secret")
	if c.session == 0 {
		t.Fatal("session 0")
	}
	token, err := wire.DecodeRawToken(c.ok(wire.CodeCreatePAT, wire.AppendCreatePAT(nil, "ci", 0)))
	if err != nil {
		t.Fatal(err)
	}
	d := dialRaw(t, srv.Addr())
	d.write(wire.RequestHeader{Operation: wire.OpRegister},
		wire.AppendLoginPAT(nil, wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "t", SDKVersion: "1"}, token))
	f, ok := d.read()
	if !ok || f.command != wire.CommandReply || f.reply.Status != 0 || f.reply.Operation != wire.OpRegister {
		t.Fatalf("token login: %+v", f)
	}
	payload, _, err := wire.ParseResult(f.body)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := wire.DecodeLoginReply(payload)
	if err != nil || lr.UserID != 0 || lr.Session == c.session || lr.ServerProtocolVersion != wire.ProtocolVersion {
		t.Fatalf("token login reply %+v (%v)", lr, err)
	}
}

func TestReplyShapes(t *testing.T) {
	srv := startServer(t)
	c := connect(t, srv)

	created, err := wire.DecodeStreamDetails(c.ok(wire.CodeCreateStream, wire.AppendCreateStream(nil, "orders")))
	if err != nil || created.ID != 0 || created.Name != "orders" {
		t.Fatalf("create stream payload %+v (%v)", created, err)
	}
	f := c.call(wire.CodeCreateStream, wire.AppendCreateStream(nil, "orders"))
	if _, rc, err := wire.ParseResult(f.body); f.reply.Status != 0 || err != nil || rc != codeStreamNameAlreadyExists {
		t.Fatalf("duplicate stream: status %d result %d (%v), want a result-framed 1012", f.reply.Status, rc, err)
	}
	if f := c.call(wire.CodeGetStream, wire.AppendIdentifiers(nil, wire.Identifier{Name: "nope"})); f.reply.Status != 0 || len(f.body) != 0 {
		t.Fatalf("missing stream: status %d body %d bytes, want empty", f.reply.Status, len(f.body))
	}
	if f := c.call(wire.CodeGetTopics, wire.AppendIdentifiers(nil, wire.Identifier{Name: "nope"})); f.reply.Status != 0 || string(f.body) != "\x00\x00\x00\x00" {
		t.Fatalf("topics of a missing stream: status %d body %x", f.reply.Status, f.body)
	}
	if f := c.call(9999, nil); f.reply.Status != codeInvalidCommand {
		t.Fatalf("unknown code: status %d, want 3", f.reply.Status)
	}
	h := c.header(wire.CodeGetStreams)
	h.Operation, h.Code = wire.OpNonReplicated, wire.CodeCreateStream // a replicated code sent as a read
	c.write(h, wire.AppendCreateStream(nil, "x"))
	if f, _ := c.read(); f.reply.Status != codeFeatureUnavailable {
		t.Fatalf("replicated code as NonReplicated: status %d, want 5", f.reply.Status)
	}
	if f := c.call(wire.CodeFlushUnsavedBuffer, nil); f.reply.Status != codeFeatureUnavailable {
		t.Fatalf("flush: status %d, want 5", f.reply.Status)
	}

	body := wire.AppendCreateStream(nil, "stamped")
	h = c.header(wire.CodeCreateStream)
	h.RequestChecksum[0] = 1 // a stamp that does not match the body
	c.write(h, body)
	if f, _ := c.read(); f.reply.Status != codeInvalidFormat {
		t.Fatalf("bad request checksum: status %d, want 4", f.reply.Status)
	}
	h = c.header(wire.CodeCreateStream)
	binary.LittleEndian.PutUint64(h.RequestChecksum[:], xxh3.Hash(body))
	c.write(h, body)
	if f, _ := c.read(); f.reply.Status != 0 {
		t.Fatalf("matching request checksum: status %d", f.reply.Status)
	}

	topic := wire.CreateTopicRequest{Stream: wire.Identifier{Name: "orders"}, PartitionsCount: 2, Name: "t", Options: wire.TopicOptions{MessageExpiry: 5_000_000}}
	got, err := wire.DecodeTopicDetails(c.ok(wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &topic)))
	if err != nil || got.MessageExpiry != 5_000_000 || got.MaxTopicSize != wire.Never || len(got.Partitions) != 2 || got.Partitions[1].ID != 1 {
		t.Fatalf("create topic payload %+v (%v)", got, err)
	}
	bad := append(wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: topic.Stream, Name: "u"}),
		wire.AppendOption(nil, "no_such_key", wire.HeaderUint8, []byte{1})...)
	if f := c.call(wire.CodeCreateTopic, bad); f.reply.Status != codeUnsupportedOptionKey {
		t.Fatalf("unknown option key: status %d, want 4041", f.reply.Status)
	}
	small := wire.CreateTopicRequest{Stream: topic.Stream, Name: "v", Options: wire.TopicOptions{MaxTopicSize: 1000}}
	if f := c.call(wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &small)); f.reply.Status != codeInvalidTopicSize {
		t.Fatalf("max topic size below a segment: status %d, want 1019", f.reply.Status)
	}
	many := wire.CreateTopicRequest{Stream: topic.Stream, Name: "w", PartitionsCount: 1001}
	if f := c.call(wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &many)); f.reply.Status != codeTooManyPartitions {
		t.Fatalf("1001 partitions: status %d, want 2015", f.reply.Status)
	}
}

// sendBody builds a SendMessages body for partition p with the given payloads.
func sendBody(t testing.TB, stream, topic string, p uint32, payloads ...string) []byte {
	t.Helper()
	b := wire.NewBatch(0)
	for _, pl := range payloads {
		if err := b.Add(0, []byte(pl), wire.AppendHeader(nil, wire.HeaderString, []byte("k"), wire.HeaderString, []byte(pl))); err != nil {
			t.Fatal(err)
		}
	}
	batch := b.Bytes()
	body := wire.AppendSendMessagesPrefix(nil, wire.Identifier{Name: stream}, wire.Identifier{Name: topic}, p, uint32(b.Len()))
	return append(body, batch...)
}

func TestSendAndPollOverTheWire(t *testing.T) {
	srv := startServer(t)
	c := connect(t, srv)
	c.ok(wire.CodeCreateStream, wire.AppendCreateStream(nil, "s"))
	c.ok(wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: wire.Identifier{Name: "s"}, PartitionsCount: 2, Name: "t"}))

	confs, err := wire.DecodeSendConfirmations(c.ok(wire.CodeSendMessages, sendBody(t, "s", "t", 1, "a", "b", "c")))
	if err != nil || len(confs) != 1 || confs[0] != (wire.SendConfirmation{StreamID: 0, TopicID: 0, PartitionID: 1, BaseOffset: 0}) {
		t.Fatalf("confirmation %+v (%v)", confs, err)
	}
	confs, _ = wire.DecodeSendConfirmations(c.ok(wire.CodeSendMessages, sendBody(t, "s", "t", 1, "d")))
	if len(confs) != 1 || confs[0].BaseOffset != 3 {
		t.Fatalf("second batch confirmation %+v", confs)
	}

	part := uint32(1)
	poll := wire.PollRequest{Consumer: wire.Consumer{Kind: 1, ID: wire.Identifier{Numeric: 1}}, Stream: wire.Identifier{Name: "s"}, Topic: wire.Identifier{Name: "t"},
		Partition: &part, Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: 1}, Count: 10}
	polled, err := wire.DecodePolled(c.ok(wire.CodePollMessages, wire.AppendPollRequest(nil, &poll)), true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range polled.Messages {
		got = append(got, fmt.Sprintf("%d:%s:%x", m.Offset, m.Payload, m.Headers))
	}
	want := []string{}
	for i, pl := range []string{"b", "c", "d"} {
		want = append(want, fmt.Sprintf("%d:%s:%x", i+1, pl, wire.AppendHeader(nil, wire.HeaderString, []byte("k"), wire.HeaderString, []byte(pl))))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || polled.PartitionID != 1 || polled.CurrentOffset != 3 {
		t.Fatalf("polled %v (partition %d current %d), want %v", got, polled.PartitionID, polled.CurrentOffset, want)
	}

	corrupt := sendBody(t, "s", "t", 0, "x")
	corrupt[len(corrupt)-1] ^= 0xff // a payload byte: the frame checksum no longer matches
	if f := c.call(wire.CodeSendMessages, corrupt); f.reply.Status != 4027 {
		t.Fatalf("corrupt frame: status %d, want 4027", f.reply.Status)
	}
	corrupt = sendBody(t, "s", "t", 0, "x")
	meta := int(binary.LittleEndian.Uint32(corrupt)) + 4
	corrupt[meta+40] ^= 0xff // the batch checksum
	if f := c.call(wire.CodeSendMessages, corrupt); f.reply.Status != 4039 {
		t.Fatalf("corrupt batch checksum: status %d, want 4039", f.reply.Status)
	}
	if f := c.call(wire.CodeSendMessages, sendBody(t, "s", "missing", 0, "x")); f.reply.Status != codeResourceNotFound {
		t.Fatalf("send to a missing topic: status %d, want 20", f.reply.Status)
	}

	store := wire.OffsetRequest{Consumer: poll.Consumer, Stream: poll.Stream, Topic: poll.Topic, Partition: &part, Offset: 9, Ack: wire.AckQuorum}
	if f := c.call(wire.CodeStoreConsumerOffset, wire.AppendStoreConsumerOffset(nil, &store)); f.reply.Status != codeInvalidOffset || len(f.body) != 0 {
		t.Fatalf("store past the end: status %d body %x, want status 4100", f.reply.Status, f.body)
	}
	store.Offset = 2
	c.ok(wire.CodeStoreConsumerOffset, wire.AppendStoreConsumerOffset(nil, &store))
	o, err := wire.DecodeConsumerOffset(c.ok(wire.CodeGetConsumerOffset, wire.AppendGetConsumerOffset(nil, &store)))
	if err != nil || *o != (wire.ConsumerOffset{PartitionID: 1, CurrentOffset: 3, StoredOffset: 2}) {
		t.Fatalf("offset %+v (%v)", o, err)
	}
}

func TestMalformedFramesCloseTheConnection(t *testing.T) {
	srv := startServer(t)
	for _, tc := range []struct {
		name  string
		frame func(c *rawClient) []byte
	}{
		{"frame above 64 MiB", func(c *rawClient) []byte {
			b := make([]byte, wire.HeaderSize)
			binary.LittleEndian.PutUint32(b[48:], wire.MaxFrameSize+1)
			b[60] = wire.CommandRequest
			return b
		}},
		{"size below the header", func(c *rawClient) []byte {
			b := make([]byte, wire.HeaderSize)
			binary.LittleEndian.PutUint32(b[48:], 10)
			return b
		}},
		{"reply command from a client", func(c *rawClient) []byte {
			b := make([]byte, wire.HeaderSize)
			wire.PutReplyHeader(b, &wire.ReplyHeader{Size: wire.HeaderSize})
			return b
		}},
		{"zero client id", func(c *rawClient) []byte {
			b := make([]byte, wire.HeaderSize)
			wire.PutRequestHeader(b, &wire.RequestHeader{Size: wire.HeaderSize, Operation: wire.OpNonReplicated, Code: wire.CodePing})
			return b
		}},
		{"server-internal operation", func(c *rawClient) []byte {
			b := make([]byte, wire.HeaderSize)
			wire.PutRequestHeader(b, &wire.RequestHeader{Size: wire.HeaderSize, Client: c.client, Operation: 70, Session: 1, Request: 1})
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, srv.Addr())
			if _, err := c.nc.Write(tc.frame(c)); err != nil {
				t.Fatal(err)
			}
			if f, ok := c.read(); ok {
				t.Fatalf("got a frame %+v, want the connection closed", f)
			}
		})
	}
}

func TestLogoutEndsTheSession(t *testing.T) {
	srv := startServer(t)
	c := connect(t, srv)
	if f := c.call(wire.CodeLogoutUser, nil); f.reply.Status != 0 || len(f.body) != 0 {
		t.Fatalf("logout: status %d body %x", f.reply.Status, f.body)
	}
	if f := c.call(wire.CodeGetStreams, nil); f.reply.Status != codeUnauthenticated {
		t.Fatalf("read after logout: status %d, want 40", f.reply.Status)
	}
	c.login("iggy", "iggy") // the connection can log in again
	c.ok(wire.CodeGetStreams, nil)
}

func TestGroupMembershipEndsWithTheConnection(t *testing.T) {
	srv := startServer(t)
	a, b := connect(t, srv), connect(t, srv)
	a.ok(wire.CodeCreateStream, wire.AppendCreateStream(nil, "s"))
	a.ok(wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: wire.Identifier{Name: "s"}, PartitionsCount: 4, Name: "t"}))
	a.ok(wire.CodeCreateConsumerGroup, wire.AppendCreateConsumerGroup(nil, wire.Identifier{Name: "s"}, wire.Identifier{Name: "t"}, "g"))
	ids := wire.AppendIdentifiers(nil, wire.Identifier{Name: "s"}, wire.Identifier{Name: "t"}, wire.Identifier{Name: "g"})
	a.ok(wire.CodeJoinConsumerGroup, ids)
	b.ok(wire.CodeJoinConsumerGroup, ids)
	asg, err := wire.DecodeGroupAssignment(a.ok(wire.CodeSyncConsumerGroup, ids))
	if err != nil || len(asg.Partitions) != 2 {
		t.Fatalf("a owns %+v (%v), want 2 partitions", asg, err)
	}
	b.nc.Close()
	for range 100 { // the server notices the disconnect asynchronously
		g, err := wire.DecodeConsumerGroup(a.ok(wire.CodeGetConsumerGroup, ids))
		if err != nil {
			t.Fatal(err)
		}
		if g.MembersCount == 1 {
			asg, _ = wire.DecodeGroupAssignment(a.ok(wire.CodeSyncConsumerGroup, ids))
			if len(asg.Partitions) != 4 {
				t.Fatalf("after the disconnect a owns %v", asg.Partitions)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the disconnected member was never released")
}

func TestConcurrentClients(t *testing.T) {
	srv := startServer(t)
	admin := connect(t, srv)
	admin.ok(wire.CodeCreateStream, wire.AppendCreateStream(nil, "s"))
	admin.ok(wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: wire.Identifier{Name: "s"}, PartitionsCount: 1, Name: "t"}))
	const clients, sends = 8, 20
	// Parallel subtests, not bare goroutines: the client helpers fail with t.Fatal, which only
	// a test's own goroutine may call. The group returns once every client is done.
	t.Run("clients", func(t *testing.T) {
		for i := range clients {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				c := connect(t, srv)
				for j := range sends {
					c.ok(wire.CodeSendMessages, sendBody(t, "s", "t", 0, fmt.Sprintf("%d-%d", i, j)))
					c.ok(wire.CodeGetTopic, wire.AppendIdentifiers(nil, wire.Identifier{Name: "s"}, wire.Identifier{Name: "t"}))
				}
			})
		}
	})
	tp, err := wire.DecodeTopicDetails(admin.ok(wire.CodeGetTopic, wire.AppendIdentifiers(nil, wire.Identifier{Name: "s"}, wire.Identifier{Name: "t"})))
	if err != nil || tp.Partitions[0].MessagesCount != clients*sends || tp.Partitions[0].CurrentOffset != clients*sends-1 {
		t.Fatalf("topic %+v (%v)", tp, err)
	}
}

func TestDropConnections(t *testing.T) {
	srv := startServer(t)
	c := connect(t, srv)
	c.ok(wire.CodeCreateStream, wire.AppendCreateStream(nil, "kept"))
	srv.DropConnections()
	if _, ok := c.read(); ok {
		t.Fatal("connection survived DropConnections")
	}
	d := connect(t, srv)
	if streams, err := wire.DecodeStreams(d.ok(wire.CodeGetStreams, nil)); err != nil || len(streams) != 1 {
		t.Fatalf("data lost across DropConnections: %+v (%v)", streams, err)
	}
}

func TestMeAndClusterMetadata(t *testing.T) {
	srv := startServer(t)
	c := connect(t, srv)
	me, err := wire.DecodeMe(c.ok(wire.CodeGetMe, nil))
	if err != nil || me.UserID != 0 || me.ClientID == 0 || me.Transport != 1 || me.Address == "" {
		t.Fatalf("GetMe %+v (%v)", me, err)
	}
	md, err := wire.DecodeClusterMetadata(c.ok(wire.CodeGetClusterMetadata, nil))
	if err != nil || len(md.Nodes) != 1 || md.Nodes[0].Role != 0 || md.Nodes[0].Status != 0 ||
		fmt.Sprintf("%s:%d", md.Nodes[0].IP, md.Nodes[0].TCPPort) != srv.Addr() {
		t.Fatalf("cluster metadata %+v (%v)", md, err)
	}
}

func TestPermissionsOverTheWire(t *testing.T) {
	srv := startServer(t)
	root := connect(t, srv)
	root.ok(wire.CodeCreateStream, wire.AppendCreateStream(nil, "s"))
	perms := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true}}
	root.ok(wire.CodeCreateUser, wire.AppendCreateUser(nil, &wire.CreateUserRequest{Username: "reader", Password: "secret", Status: wire.UserActive, Permissions: perms}))
	u, err := wire.DecodeUserDetails(root.ok(wire.CodeGetUser, wire.AppendIdentifiers(nil, wire.Identifier{Name: "reader"})))
	if err != nil || u.ID != 1 || u.Permissions == nil || !u.Permissions.Global.ReadStreams || u.Permissions.Global.ManageStreams {
		t.Fatalf("GetUser %+v (%v)", u, err)
	}

	r := dialRaw(t, srv.Addr())
	r.login("reader", "secret")
	r.ok(wire.CodeGetStreams, nil)
	f := r.call(wire.CodeCreateStream, wire.AppendCreateStream(nil, "mine"))
	if _, rc, _ := wire.ParseResult(f.body); f.reply.Status != 0 || rc != codeUnauthorized {
		t.Fatalf("create stream without manage_streams: status %d result %d, want result 41", f.reply.Status, rc)
	}
	if f := r.call(wire.CodeGetUsers, nil); f.reply.Status != codeUnauthorized {
		t.Fatalf("get users without read_users: status %d, want 41", f.reply.Status)
	}
	if f := r.call(wire.CodeSendMessages, sendBody(t, "s", "t", 0, "x")); f.reply.Status != codeResourceNotFound {
		t.Fatalf("send to a missing topic: status %d, want 20", f.reply.Status)
	}
	root.ok(wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: wire.Identifier{Name: "s"}, PartitionsCount: 1, Name: "t"}))
	if f := r.call(wire.CodeSendMessages, sendBody(t, "s", "t", 0, "x")); f.reply.Status != codeUnauthorized {
		t.Fatalf("send without send_messages: status %d, want 41", f.reply.Status)
	}
	root.ok(wire.CodeUpdatePermissions, wire.AppendUpdatePermissions(nil, wire.Identifier{Name: "reader"},
		&wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: 0, SendMessages: true}}}))
	r.ok(wire.CodeSendMessages, sendBody(t, "s", "t", 0, "x"))
}

func TestStaleGroupMemberIsEvicted(t *testing.T) {
	srv, err := Start(Config{Addr: "127.0.0.1:0", HeartbeatInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	idle, member := connect(t, srv), connect(t, srv)
	member.ok(wire.CodeCreateStream, wire.AppendCreateStream(nil, "s"))
	member.ok(wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: wire.Identifier{Name: "s"}, PartitionsCount: 1, Name: "t"}))
	member.ok(wire.CodeCreateConsumerGroup, wire.AppendCreateConsumerGroup(nil, wire.Identifier{Name: "s"}, wire.Identifier{Name: "t"}, "g"))
	member.ok(wire.CodeJoinConsumerGroup, wire.AppendIdentifiers(nil, wire.Identifier{Name: "s"}, wire.Identifier{Name: "t"}, wire.Identifier{Name: "g"}))
	f, ok := member.read() // silent past 1.2 × the interval
	if !ok || f.command != wire.CommandEviction || f.eviction.Reason != wire.EvictStaleClient {
		t.Fatalf("got closed=%v %+v, want a StaleClient eviction", !ok, f)
	}
	// A silent session outside every group is left alone.
	idle.ok(wire.CodePing, nil)
}
