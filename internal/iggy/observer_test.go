package iggy

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// recorder is an Observer that keeps what it was told.
type recorder struct {
	mu       sync.Mutex
	commands []string // command/outcome
	rejected []error
}

func (r *recorder) CommandDone(command string, _ time.Duration, o Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commands = append(r.commands, command+"/"+string(o))
}

func (r *recorder) LoginRejected(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected = append(r.rejected, err)
}

func (r *recorder) seen() ([]string, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.commands...), append([]error(nil), r.rejected...)
}

func (s *scripted) logins() int {
	n := 0
	for _, r := range s.requests() {
		if r.h.Operation == wire.OpRegister {
			n++
		}
	}
	return n
}

func TestObserverSeesOutcomesAndLoginRejections(t *testing.T) {
	reject := false
	var mu sync.Mutex
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case h.Operation == wire.OpRegister && reject:
			return reply(h, CodeInvalidCredentials, nil)
		case h.Operation == wire.OpRegister:
			return nil
		case h.Code == wire.CodeGetStream:
			return reply(h, CodeStreamIDNotFound, nil)
		case h.Code == wire.CodePing:
			return reply(h, 0, nil)
		}
		return nil // anything else: the connection drops
	})
	rec := &recorder{}
	cfg := s.config()
	cfg.Observer = rec
	cl, err := Dial(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.GetStream(testCtx(t), ID(9)); !IsCode(err, CodeStreamIDNotFound) {
		t.Fatalf("GetStream: %v", err)
	}
	mu.Lock()
	reject = true // the server "restarts" with other credentials
	mu.Unlock()
	if _, err := cl.GetStreams(testCtx(t)); !IsLoginRejected(err) {
		t.Fatalf("GetStreams after the credentials changed: %v, want a rejected login", err)
	}
	commands, rejected := rec.seen()
	want := []string{"ping/ok", "get_stream/rejected", "get_streams/rejected"}
	if len(commands) != len(want) {
		t.Fatalf("commands observed: %v, want %v", commands, want)
	}
	for i := range want {
		if commands[i] != want[i] {
			t.Fatalf("commands observed: %v, want %v", commands, want)
		}
	}
	if len(rejected) != 1 || !IsCode(rejected[0], CodeInvalidCredentials) {
		t.Fatalf("login rejections observed: %v", rejected)
	}
}

func TestOutcomeOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Outcome
	}{
		{nil, OutcomeOK},
		{&Error{Code: CodeTopicIDNotFound}, OutcomeRejected},
		{&ConnError{Op: "poll_messages", Err: context.Canceled, Sent: true}, OutcomeCancelled},
		{&ConnError{Op: "poll_messages", Err: context.DeadlineExceeded}, OutcomeTimeout},
		{&ConnError{Op: "dial", Err: errors.New("connection refused")}, OutcomeConnection},
		{errors.New("iggy get_topic: malformed reply"), OutcomeConnection},
	} {
		if got := OutcomeOf(tc.err); got != tc.want {
			t.Errorf("OutcomeOf(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

// A call cancelled while it waits for a pooled connection sent nothing: the pool keeps its
// connection and session. A call cancelled with its request in flight retires the connection
// (its reply would arrive on it later), and the next call logs in again.
func TestCancelledCallsRetireAConnectionOnlyWithBytesInFlight(t *testing.T) {
	arrived := make(chan struct{})
	answer := make(chan struct{})
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		switch {
		case h.Operation == wire.OpRegister:
			return nil
		case h.Code == wire.CodeGetStream:
			arrived <- struct{}{}
			<-answer
			return reply(h, 0, streamPayload("s"))
		case h.Code == wire.CodePing:
			return reply(h, 0, nil)
		}
		return silence
	})
	cl, err := Dial(testCtx(t), s.config())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	held := make(chan error, 1)
	go func() { _, err := cl.GetStream(testCtx(t), ID(1)); held <- err }()
	<-arrived // the only connection is busy
	ctx, cancel := context.WithCancel(testCtx(t))
	waited := make(chan error, 1)
	go func() { waited <- cl.Ping(ctx) }()
	for _, _, waiting := cl.PoolStats(); waiting == 0; _, _, waiting = cl.PoolStats() {
		time.Sleep(time.Millisecond) // awaiting the call's arrival in the pool's queue
	}
	if size, inUse, _ := cl.PoolStats(); size != 1 || inUse != 1 {
		t.Fatalf("PoolStats: size %d, in use %d; want 1, 1", size, inUse)
	}
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("Ping cancelled while waiting: %v", err)
	}
	close(answer)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := cl.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := s.logins(); n != 1 {
		t.Fatalf("%d logins after a call cancelled while waiting for a connection, want 1", n)
	}

	// In flight: GetStreams is never answered.
	ctx, cancel = context.WithCancel(testCtx(t))
	inFlight := make(chan error, 1)
	go func() { _, err := cl.GetStreams(ctx); inFlight <- err }()
	waitRequests(t, s, wire.CodeGetStreams)
	cancel()
	if err := <-inFlight; !errors.Is(err, context.Canceled) || !MaybeApplied(err) {
		t.Fatalf("GetStreams cancelled in flight: %v", err)
	}
	if err := cl.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := s.logins(); n != 2 {
		t.Fatalf("%d logins after a call cancelled in flight, want 2 (the connection is retired)", n)
	}
}

// A cancellation that lands once the reply has been read leaves nothing in flight: the
// connection stays, however the cancellation races the round trip.
func TestCancellationAfterTheReplyKeepsTheConnection(t *testing.T) {
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		if h.Code == wire.CodePing {
			return reply(h, 0, nil)
		}
		return nil
	})
	cn, err := DialConn(testCtx(t), s.config())
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	for range 200 {
		ctx, cancel := context.WithCancel(testCtx(t))
		go cancel()
		err := cn.Ping(ctx)
		cancel()
		if err != nil {
			continue // cancelled before or during the round trip (the next call reconnects)
		}
		// Counted after the call: it may have reconnected itself, after an earlier iteration's
		// cancelled round trip dropped the connection.
		before := s.logins()
		if err := cn.Ping(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if after := s.logins(); after != before {
			t.Fatalf("a call that succeeded before its cancellation landed cost a reconnect (%d logins, had %d)", after, before)
		}
	}
}

// waitRequests waits until the server has seen a request with code.
func waitRequests(t *testing.T, s *scripted, code uint32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, r := range s.requests() {
			if r.h.Code == code {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %d never reached the server", code)
		}
		time.Sleep(time.Millisecond)
	}
}
