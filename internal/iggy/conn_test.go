package iggy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// scripted is a fake Iggy server whose replies a test scripts, to drive the client's session
// rules of Iggy protocol 0.11.0 exactly: request numbering, evictions, transient codes,
// mismatched replies, silence. Logins succeed with session 100+connection index unless the
// script answers them.
type scripted struct {
	t      *testing.T
	ln     net.Listener
	script func(conn int, h wire.RequestHeader, body []byte) []byte // reply frame(s); nil closes the connection

	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	conn int
	h    wire.RequestHeader
	body []byte
}

func startScripted(t *testing.T, script func(conn int, h wire.RequestHeader, body []byte) []byte) *scripted {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scripted{t: t, ln: ln, script: script}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for n := 0; ; n++ {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { s.serve(n, nc) })
		}
	})
	return s
}

func (s *scripted) serve(n int, nc net.Conn) {
	defer nc.Close()
	br := bufio.NewReader(nc)
	var hdr [wire.HeaderSize]byte
	for {
		body, err := wire.ReadFrame(br, &hdr, nil)
		if err != nil {
			return
		}
		h, err := wire.DecodeRequestHeader(hdr[:])
		if err != nil {
			s.t.Errorf("client sent a bad header: %v", err)
			return
		}
		s.mu.Lock()
		s.seen = append(s.seen, seenRequest{n, h, bytes.Clone(body)})
		s.mu.Unlock()
		out := s.script(n, h, body)
		if out == nil && h.Operation == wire.OpRegister {
			out = loginOK(h, 100+uint64(n))
		}
		if out == nil {
			return
		}
		if len(out) == 0 { // silence: keep reading, never answer
			continue
		}
		if _, err := nc.Write(out); err != nil {
			return
		}
	}
}

func (s *scripted) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.seen...)
}

func (s *scripted) config() Config {
	return Config{Addr: s.ln.Addr().String(), Username: "iggy", Password: "iggy", PingInterval: -1, PoolSize: 1,
		RosterInterval: -1} // the script does not speak GetClusterMetadata
}

var silence = []byte{}

func reply(h wire.RequestHeader, status uint32, body []byte) []byte {
	f := make([]byte, wire.HeaderSize, wire.HeaderSize+len(body))
	wire.PutReplyHeader(f, &wire.ReplyHeader{Size: uint32(wire.HeaderSize + len(body)), Client: h.Client,
		Request: h.Request, Operation: h.Operation, Status: status})
	return append(f, body...)
}

func loginOK(h wire.RequestHeader, session uint64) []byte {
	p := wire.AppendResultOK(nil)
	p = wire.AppendLoginReply(p, wire.LoginReply{UserID: 0, Session: session, ServerProtocolVersion: wire.ProtocolVersion, ServerVersion: "0.9.0"})
	return reply(h, 0, p)
}

func eviction(reason uint8) []byte {
	f := make([]byte, wire.HeaderSize)
	wire.PutEvictionHeader(f, &wire.EvictionHeader{Reason: reason})
	return f
}

func streamPayload(name string) []byte {
	return wire.AppendStreamDetails(nil, &Stream{ID: 1, Name: name})
}

func dialScripted(t *testing.T, s *scripted) *Conn {
	t.Helper()
	cn, err := DialConn(testCtx(t), s.config())
	if err != nil {
		t.Fatalf("DialConn: %v", err)
	}
	t.Cleanup(func() { cn.Close() })
	return cn
}

func TestRequestNumbering(t *testing.T) {
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		switch {
		case h.Operation == wire.OpRegister:
			return nil
		case h.Operation == wire.OpCreateStream:
			return reply(h, 0, append(wire.AppendResultOK(nil), streamPayload("s")...))
		case h.Operation == wire.OpSendMessages:
			return reply(h, 0, wire.AppendSendConfirmations(nil, []SendConfirmation{{BaseOffset: 7}}))
		case h.Code == wire.CodeGetStreams:
			return reply(h, 0, nil)
		default:
			return reply(h, 0, nil)
		}
	})
	cn := dialScripted(t, s)
	ctx := testCtx(t)
	steps := []func() error{
		func() error { return cn.Ping(ctx) },
		func() error { _, err := cn.CreateStream(ctx, "a"); return err },
		func() error { _, err := cn.GetStreams(ctx); return err },
		func() error { _, err := cn.CreateStream(ctx, "b"); return err },
		func() error {
			_, err := cn.SendMessages(ctx, ID(1), ID(0), 0, []Message{{Payload: []byte("x")}})
			return err
		},
		func() error { return cn.Ping(ctx) },
	}
	for i, f := range steps {
		if err := f(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	cn.Close()
	want := []struct {
		op      uint8
		code    uint32
		request uint64
		session uint64
	}{
		{wire.OpRegister, 0, 0, 0},
		{wire.OpNonReplicated, wire.CodePing, 1, 100},
		{wire.OpCreateStream, 0, 1, 100},
		{wire.OpNonReplicated, wire.CodeGetStreams, 2, 100},
		{wire.OpCreateStream, 0, 2, 100},
		{wire.OpSendMessages, 0, 3, 100},
		{wire.OpNonReplicated, wire.CodePing, 3, 100},
		{wire.OpLogout, 0, 3, 100},
	}
	got := s.requests()
	if len(got) != len(want) {
		t.Fatalf("server saw %d requests, want %d", len(got), len(want))
	}
	client := got[0].h.Client
	if client == ([16]byte{}) {
		t.Fatal("client id is zero")
	}
	for i, w := range want {
		h := got[i].h
		if h.Operation != w.op || h.Code != w.code || h.Request != w.request || h.Session != w.session || h.Client != client {
			t.Errorf("request %d: op %d code %d request %d session %d; want %+v", i, h.Operation, h.Code, h.Request, h.Session, w)
		}
		if err := h.Validate(); err != nil {
			t.Errorf("request %d fails the server's field rules: %v", i, err)
		}
	}
	login, err := wire.DecodeLogin(got[0].body)
	if err != nil || login.Username != "iggy" || login.Password != "iggy" || login.Version.ProtocolVersion != wire.ProtocolVersion {
		t.Fatalf("login body %+v, %v", login, err)
	}
}

func TestEvictionReconnectsWithNewClient(t *testing.T) {
	s := startScripted(t, func(conn int, h wire.RequestHeader, _ []byte) []byte {
		if h.Operation == wire.OpRegister {
			return nil
		}
		if conn == 0 {
			return eviction(wire.EvictStaleClient)
		}
		return reply(h, 0, wire.AppendStreams(nil, []Stream{{ID: 3, Name: "x"}}))
	})
	cn := dialScripted(t, s)
	streams, err := cn.GetStreams(testCtx(t))
	if err != nil || len(streams) != 1 || streams[0].Name != "x" {
		t.Fatalf("GetStreams after eviction: %+v, %v", streams, err)
	}
	if cn.Session() != 101 {
		t.Fatalf("session %d, want the second login's 101", cn.Session())
	}
	got := s.requests()
	if len(got) != 4 {
		t.Fatalf("server saw %d requests, want login, read, login, read", len(got))
	}
	if got[0].h.Client == got[2].h.Client {
		t.Fatal("re-login reused the client id")
	}
	if got[3].conn != 1 || got[3].h.Session != 101 || got[3].h.Request != 1 || got[3].h.Client != got[2].h.Client {
		t.Fatalf("replayed read: %+v", got[3])
	}
}

func TestEvictionAnswersSendWithoutExecuting(t *testing.T) {
	// An eviction in place of the reply means the server refused the request, so even a
	// send is replayed on the new session.
	s := startScripted(t, func(conn int, h wire.RequestHeader, _ []byte) []byte {
		switch {
		case h.Operation == wire.OpRegister:
			return nil
		case conn == 0:
			return eviction(wire.EvictNoSession)
		}
		return reply(h, 0, wire.AppendSendConfirmations(nil, []SendConfirmation{{BaseOffset: 9}}))
	})
	cn := dialScripted(t, s)
	conf, err := cn.SendMessages(testCtx(t), ID(0), ID(0), 0, []Message{{Payload: []byte("x")}})
	if err != nil || conf.BaseOffset != 9 {
		t.Fatalf("send after eviction: %+v, %v", conf, err)
	}
}

func TestLoginFailures(t *testing.T) {
	tests := []struct {
		name  string
		reply func(h wire.RequestHeader) []byte
		code  uint32
	}{
		{"bad credentials", func(wire.RequestHeader) []byte { return eviction(wire.EvictInvalidCredentials) }, CodeInvalidCredentials},
		{"bad token", func(wire.RequestHeader) []byte { return eviction(wire.EvictInvalidToken) }, CodeInvalidPersonalAccessToken},
		{"incompatible protocol", func(wire.RequestHeader) []byte { return eviction(wire.EvictIncompatibleProtocol) }, CodeIncompatibleProtocolVersion},
		{"inactive user", func(wire.RequestHeader) []byte { return eviction(wire.EvictUserInactive) }, CodeUserInactive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte { return tt.reply(h) })
			_, err := DialConn(testCtx(t), s.config())
			wantCode(t, "login", err, tt.code)
			if n := len(s.requests()); n != 1 {
				t.Fatalf("a credential failure was retried: %d logins", n)
			}
		})
	}
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		return reply(h, 0, wire.AppendResultOK(nil)) // no login payload
	})
	if _, err := DialConn(testCtx(t), s.config()); !errors.Is(err, ErrConnection) {
		t.Fatalf("malformed login reply: %v", err)
	}
}

func TestTransientCodes(t *testing.T) {
	var mu sync.Mutex
	creates, pings := 0, 0
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		mu.Lock()
		defer mu.Unlock()
		switch h.Operation {
		case wire.OpRegister:
			return nil
		case wire.OpCreateStream:
			creates++
			if creates <= 2 {
				return reply(h, 0, wire.AppendResultError(nil, CodeTransientNotCommitted))
			}
			return reply(h, 0, append(wire.AppendResultOK(nil), streamPayload("s")...))
		}
		pings++
		if pings == 1 {
			return reply(h, CodeTransientNotAccepted, nil)
		}
		return reply(h, 0, nil)
	})
	cn := dialScripted(t, s)
	if _, err := cn.CreateStream(testCtx(t), "s"); err != nil {
		t.Fatalf("CreateStream through TransientNotCommitted: %v", err)
	}
	if err := cn.Ping(testCtx(t)); err != nil {
		t.Fatalf("Ping through TransientNotAccepted: %v", err)
	}
	got := s.requests()
	if len(got) != 6 {
		t.Fatalf("server saw %d requests", len(got))
	}
	for _, r := range got[1:4] {
		if r.conn != 0 || r.h.Request != 1 || r.h.Client != got[0].h.Client || !bytes.Equal(r.body, got[1].body) {
			t.Fatalf("TransientNotCommitted resend is not the identical frame: %+v", r)
		}
	}
}

func TestServerErrorsKeepTheConnection(t *testing.T) {
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		switch {
		case h.Operation == wire.OpRegister:
			return nil
		case h.Operation == wire.OpCreateStream:
			return reply(h, 0, wire.AppendResultError(nil, CodeStreamNameAlreadyExists))
		case h.Code == wire.CodeGetStream:
			return reply(h, CodeUnauthorized, nil)
		}
		return reply(h, 0, nil)
	})
	cn := dialScripted(t, s)
	ctx := testCtx(t)
	_, err := cn.CreateStream(ctx, "s")
	wantCode(t, "result-framed rejection", err, CodeStreamNameAlreadyExists)
	_, err = cn.GetStream(ctx, ID(0))
	wantCode(t, "status rejection", err, CodeUnauthorized)
	_, err = cn.GetTopics(ctx, ID(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.requests() {
		if r.conn != 0 {
			t.Fatal("a server rejection dropped the connection")
		}
	}
}

func TestUnauthenticatedReplaysAfterRelogin(t *testing.T) {
	s := startScripted(t, func(conn int, h wire.RequestHeader, _ []byte) []byte {
		if h.Operation == wire.OpRegister {
			return nil
		}
		if conn == 0 {
			return reply(h, CodeUnauthenticated, nil)
		}
		return reply(h, 0, nil)
	})
	cn := dialScripted(t, s)
	if err := cn.Ping(testCtx(t)); err != nil {
		t.Fatalf("Ping after Unauthenticated: %v", err)
	}
	if cn.Session() != 101 {
		t.Fatal("no re-login")
	}
}

func TestBrokenRepliesDropTheConnection(t *testing.T) {
	tests := []struct {
		name  string
		reply func(h wire.RequestHeader) []byte
	}{
		{"wrong request number", func(h wire.RequestHeader) []byte { h.Request++; return reply(h, 0, nil) }},
		{"request frame", func(h wire.RequestHeader) []byte {
			f := make([]byte, wire.HeaderSize)
			wire.PutRequestHeader(f, &wire.RequestHeader{Size: wire.HeaderSize})
			return f
		}},
		{"closed", func(wire.RequestHeader) []byte { return nil }},
		{"empty send reply", func(h wire.RequestHeader) []byte { return reply(h, 0, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startScripted(t, func(conn int, h wire.RequestHeader, _ []byte) []byte {
				switch {
				case h.Operation == wire.OpRegister:
					return nil
				case conn == 0:
					return tt.reply(h)
				}
				return reply(h, 0, wire.AppendSendConfirmations(nil, []SendConfirmation{{BaseOffset: 1}}))
			})
			cn := dialScripted(t, s)
			_, err := cn.SendMessages(testCtx(t), ID(0), ID(0), 0, []Message{{Payload: []byte("x")}})
			if tt.name == "empty send reply" {
				// The dead-session shape: not executed, so it is replayed.
				if err != nil {
					t.Fatalf("send after an empty reply: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrConnection) || !MaybeApplied(err) || IsCode(err) {
				t.Fatalf("send: %v, want a maybe-applied ErrConnection", err)
			}
			// The next call runs on a new connection.
			if _, err := cn.SendMessages(testCtx(t), ID(0), ID(0), 0, []Message{{Payload: []byte("y")}}); err != nil {
				t.Fatalf("send on the new connection: %v", err)
			}
			if last := s.requests()[len(s.requests())-1]; last.conn != 1 {
				t.Fatalf("second send ran on connection %d", last.conn)
			}
		})
	}
}

func TestDeadlineOnSilentServer(t *testing.T) {
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		if h.Operation == wire.OpRegister {
			return nil
		}
		return silence
	})
	cn := dialScripted(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := cn.Ping(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrConnection) {
		t.Fatalf("Ping on a silent server: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Ping took %v past a 200ms deadline", d)
	}
}

func TestPoolSpreadsAndCloses(t *testing.T) {
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		if h.Operation == wire.OpRegister {
			return nil
		}
		if h.Code == wire.CodePing {
			time.Sleep(20 * time.Millisecond)
		}
		return reply(h, 0, nil)
	})
	cfg := s.config()
	cfg.PoolSize = 3
	c, err := Dial(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if err := c.Ping(testCtx(t)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	used := map[int]bool{}
	for _, r := range s.requests() {
		if r.h.Code == wire.CodePing {
			used[r.conn] = true
		}
	}
	if len(used) < 2 {
		t.Fatalf("concurrent calls used %d of 3 connections", len(used))
	}
	cn, release, err := c.Acquire(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := cn.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	release()
	if err := cn.Ping(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ping on a released connection: %v", err)
	}
	c.Close()
	logouts := 0
	for _, r := range s.requests() {
		if r.h.Operation == wire.OpLogout {
			logouts++
		}
	}
	if logouts != 4 {
		t.Fatalf("%d logouts, want 3 pooled + 1 acquired", logouts)
	}
}

func TestPingLoop(t *testing.T) {
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		if h.Operation == wire.OpRegister {
			return nil
		}
		return reply(h, 0, nil)
	})
	cfg := s.config()
	cfg.PingInterval = 10 * time.Millisecond
	cn, err := DialConn(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		pings := 0
		for _, r := range s.requests() {
			if r.h.Code == wire.CodePing {
				pings++
			}
		}
		if pings >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pings in 5s with a 10ms interval", pings)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cn.Close()
}

// FuzzReadReply feeds arbitrary bytes to the client as the server's answer to a request and
// decodes the payload as every reply type would be: it must fail cleanly, never panic.
func FuzzReadReply(f *testing.F) {
	h := wire.RequestHeader{Client: [16]byte{1}, Request: 1, Operation: wire.OpNonReplicated, Code: wire.CodeGetStream}
	f.Add(uint8(wire.OpNonReplicated), reply(h, 0, streamPayload("s")))
	f.Add(uint8(wire.OpNonReplicated), eviction(wire.EvictStaleClient))
	h.Operation = wire.OpCreateTopic
	f.Add(uint8(wire.OpCreateTopic), reply(h, 0, append(wire.AppendResultOK(nil), wire.AppendTopicDetails(nil, &Topic{Name: "t", Partitions: []Partition{{}}})...)))
	f.Add(uint8(wire.OpCreateTopic), reply(h, 0, wire.AppendResultError(nil, 2013)))
	h.Operation = wire.OpSendMessages
	f.Add(uint8(wire.OpSendMessages), reply(h, 0, wire.AppendSendConfirmations(nil, []SendConfirmation{{}})))
	h.Operation = wire.OpRegister
	h.Request = 0
	f.Add(uint8(wire.OpRegister), loginOK(h, 5))
	tooLarge := make([]byte, wire.HeaderSize)
	wire.PutReplyHeader(tooLarge, &wire.ReplyHeader{Size: wire.MaxFrameSize + 1, Request: 1, Operation: wire.OpNonReplicated})
	f.Add(uint8(wire.OpNonReplicated), tooLarge)
	cfg, _ := Config{Addr: "x:1", Username: "iggy"}.normalize()
	f.Fuzz(func(t *testing.T, op uint8, b []byte) {
		cn := &Conn{cfg: cfg, br: bufio.NewReader(bytes.NewReader(b))}
		reqNo := uint64(1)
		if op == wire.OpRegister {
			reqNo = 0
		}
		payload, err := cn.readReply("fuzz", op, reqNo)
		if err != nil {
			return
		}
		_, _ = wire.DecodeStreamDetails(payload)
		_, _ = wire.DecodeTopicDetails(payload)
		_, _ = wire.DecodeSendConfirmations(payload)
		_, _ = wire.DecodeLoginReply(payload)
		_, _ = wire.DecodePolled(payload, true)
	})
}

// A reply declaring more than a frame may hold drops the connection and fails the call with
// ErrReplyTooLarge, without asking again (the same request gets the same answer); the next
// call runs on a new connection.
func TestReplyTooLarge(t *testing.T) {
	s := startScripted(t, func(conn int, h wire.RequestHeader, _ []byte) []byte {
		switch {
		case h.Operation == wire.OpRegister:
			return nil
		case conn == 0:
			f := make([]byte, wire.HeaderSize)
			wire.PutReplyHeader(f, &wire.ReplyHeader{Size: wire.MaxFrameSize + 1, Client: h.Client,
				Request: h.Request, Operation: h.Operation})
			return f
		}
		return reply(h, 0, streamPayload("s"))
	})
	cn := dialScripted(t, s)
	_, err := cn.GetStream(testCtx(t), ID(1))
	if !errors.Is(err, ErrReplyTooLarge) || !errors.Is(err, ErrConnection) {
		t.Fatalf("GetStream: %v, want ErrReplyTooLarge", err)
	}
	if n := len(s.requests()); n != 2 { // login, the call
		t.Fatalf("%d requests, want the call once after the login", n)
	}
	if _, err := cn.GetStream(testCtx(t), ID(1)); err != nil {
		t.Fatalf("GetStream on a new connection: %v", err)
	}
}

// A request answered TransientNotCommitted (57, outcome unknown) and then, on its resend,
// TransientNotAccepted (58: a view change moved the primary) may have been committed: a send is
// not sent again and reports MaybeApplied, while a metadata operation, which may be replayed,
// goes through on a new session.
func TestNotCommittedThenNotAcceptedIsOutcomeUnknown(t *testing.T) {
	var mu sync.Mutex
	sends, creates := 0, 0
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		mu.Lock()
		defer mu.Unlock()
		switch h.Operation {
		case wire.OpRegister:
			return nil
		case wire.OpSendMessages:
			sends++
			if sends == 1 {
				return reply(h, CodeTransientNotCommitted, nil) // a send's reply is not result-framed
			}
			return reply(h, CodeTransientNotAccepted, nil)
		case wire.OpCreateStream:
			creates++
			switch creates {
			case 1:
				return reply(h, 0, wire.AppendResultError(nil, CodeTransientNotCommitted))
			case 2:
				return reply(h, 0, wire.AppendResultError(nil, CodeTransientNotAccepted))
			}
			return reply(h, 0, append(wire.AppendResultOK(nil), streamPayload("s")...))
		}
		return reply(h, 0, nil)
	})
	cn := dialScripted(t, s)
	_, err := cn.SendMessages(testCtx(t), Name("s"), Name("t"), 0, []Message{{Payload: []byte("x")}})
	if !MaybeApplied(err) || IsCode(err, CodeTransientNotAccepted) {
		t.Fatalf("send answered 57 then 58: %v; want a maybe-applied connection error", err)
	}
	mu.Lock()
	if sends != 2 {
		t.Errorf("the send went out %d times, want 2 (the 57 resend only)", sends)
	}
	mu.Unlock()
	if _, err := cn.CreateStream(testCtx(t), "s"); err != nil {
		t.Fatalf("CreateStream answered 57, 58, then ok: %v", err)
	}
	var sessions []uint64
	for _, r := range s.requests() {
		if r.h.Operation == wire.OpCreateStream {
			sessions = append(sessions, r.h.Session)
		}
	}
	if len(sessions) != 3 || sessions[2] == sessions[0] {
		t.Errorf("CreateStream sessions %v: want the replay on a new session", sessions)
	}
}
