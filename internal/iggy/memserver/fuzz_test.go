package memserver

import (
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// fuzzSeedFrames are valid request frames of most commands, sent by a logged-in client.
func fuzzSeedFrames() [][]byte {
	s, t, g := wire.Identifier{Name: "s"}, wire.Identifier{Name: "t"}, wire.Identifier{Name: "g"}
	part := uint32(0)
	b := wire.NewBatch(0)
	_ = b.Add(1, []byte("payload"), wire.AppendHeader(nil, wire.HeaderString, []byte("k"), wire.HeaderString, []byte("v")))
	send := append(wire.AppendSendMessagesPrefix(nil, s, t, 0, 1), b.Bytes()...)
	offset := wire.OffsetRequest{Consumer: wire.Consumer{Kind: 1, ID: wire.Identifier{Numeric: 1}}, Stream: s, Topic: t, Partition: &part, Ack: 1}
	poll := wire.PollRequest{Consumer: offset.Consumer, Stream: s, Topic: t, Partition: &part, Strategy: wire.PollingStrategy{Kind: wire.PollFirst}, Count: 10, AutoCommit: true}
	version := wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "fuzz", SDKVersion: "1"}
	reqs := []struct {
		code uint32
		body []byte
	}{
		{wire.CodePing, nil},
		{wire.CodeLoginRegister, wire.AppendLoginUser(nil, version, "iggy", "iggy")},
		{wire.CodeLoginRegisterPAT, wire.AppendLoginPAT(nil, version, "token")},
		{wire.CodeCreateStream, wire.AppendCreateStream(nil, "s")},
		{wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: s, PartitionsCount: 2, Name: "t", Options: wire.TopicOptions{MessageExpiry: 10}})},
		{wire.CodeSendMessages, send},
		{wire.CodePollMessages, wire.AppendPollRequest(nil, &poll)},
		{wire.CodeStoreConsumerOffset, wire.AppendStoreConsumerOffset(nil, &offset)},
		{wire.CodeGetConsumerOffset, wire.AppendGetConsumerOffset(nil, &offset)},
		{wire.CodeDeleteConsumerOffset, wire.AppendDeleteConsumerOffset(nil, &offset)},
		{wire.CodeCreateConsumerGroup, wire.AppendCreateConsumerGroup(nil, s, t, "g")},
		{wire.CodeJoinConsumerGroup, wire.AppendIdentifiers(nil, s, t, g)},
		{wire.CodeSyncConsumerGroup, wire.AppendIdentifiers(nil, s, t, g)},
		{wire.CodeGetConsumerGroups, wire.AppendIdentifiers(nil, s, t)},
		{wire.CodeGetTopic, wire.AppendIdentifiers(nil, s, t)},
		{wire.CodeGetStream, wire.AppendIdentifiers(nil, s)},
		{wire.CodeCreatePartitions, wire.AppendPartitionsChange(nil, s, t, 2)},
		{wire.CodeCreateUser, wire.AppendCreateUser(nil, &wire.CreateUserRequest{Username: "user", Password: "pass", Status: 1, Permissions: &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: 0, Topics: []wire.TopicPermissions{{TopicID: 0, PollMessages: true}}}}}})},
		{wire.CodeUpdatePermissions, wire.AppendUpdatePermissions(nil, wire.Identifier{Name: "user"}, &wire.Permissions{})},
		{wire.CodeChangePassword, wire.AppendChangePassword(nil, wire.Identifier{Name: "user"}, "pass", "next")},
		{wire.CodeCreatePAT, wire.AppendCreatePAT(nil, "pat", 0)},
		{wire.CodeGetMe, nil},
		{wire.CodeGetClusterMetadata, nil},
		{wire.CodeLeaveConsumerGroup, wire.AppendIdentifiers(nil, s, t, g)},
		{wire.CodeDeleteTopic, wire.AppendIdentifiers(nil, s, t)},
		{wire.CodeLogoutUser, nil},
	}
	var frames [][]byte
	for i, r := range reqs {
		op := wire.OperationForCode(r.code)
		h := wire.RequestHeader{Size: uint32(wire.HeaderSize + len(r.body)), Client: [16]byte{1}, Operation: op, Code: r.code, Session: 1, Request: uint64(i + 1)}
		if op == wire.OpRegister {
			h.Session, h.Request = 0, 0
		}
		f := make([]byte, wire.HeaderSize, int(h.Size))
		wire.PutRequestHeader(f, &h)
		frames = append(frames, append(f, r.body...))
	}
	return frames
}

// FuzzServerRequest feeds arbitrary bytes to a connection of a logged-in client: whatever
// arrives, the server must answer or close, never panic, hang or allocate past the frame cap.
// The corpus under testdata/fuzz/FuzzServerRequest replays in every test run.
func FuzzServerRequest(f *testing.F) {
	seeds := fuzzSeedFrames()
	for _, s := range seeds {
		f.Add(s)
	}
	var all []byte
	for _, s := range seeds {
		all = append(all, s...)
	}
	f.Add(all)

	srv := &Server{
		addr:  "127.0.0.1:8090",
		state: newState(time.Now, "iggy", "iggy"),
		log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		conns: map[*conn]struct{}{},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Bound the declared frame sizes a fuzzer may invent to what it actually sends, so a
		// run waits for nothing; oversized declarations are covered by the unit tests.
		if len(data) >= wire.HeaderSize && binary.LittleEndian.Uint32(data[48:]) > uint32(len(data)) {
			binary.LittleEndian.PutUint32(data[48:], uint32(len(data)))
		}
		client, server := net.Pipe()
		c := newConn(srv, server)
		c.setSession(srv.state.openSession(0, [16]byte{1}, "fuzz"))
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.serve()
		}()
		go func() { _, _ = io.Copy(io.Discard, client) }()
		_ = client.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = client.Write(data)
		client.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("connection did not finish")
		}
	})
}
