package listener

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// routes is a Dispatcher over a fixed map: key → versions and handler.
type routes map[int16]route

type route struct {
	min, max int16
	h        Handler
}

func (r routes) Lookup(_ *ConnContext, key, version int16) (Handler, bool) {
	rt, ok := r[key]
	if !ok || version < rt.min || version > rt.max {
		return Handler{}, false
	}
	return rt.h, true
}

type testServer struct {
	*Server
	addr string
	done chan error
	logs *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startServer(t testing.TB, d Dispatcher, tweak func(*Config)) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, ln, d, tweak)
}

// startPipeServer is startServer over in-memory connections (dial them with dialPipe). Inside a
// synctest bubble every wait of the server is then one synctest.Wait can see: a test asserts
// that nothing more happens once every goroutine is blocked, instead of sleeping and hoping.
func startPipeServer(t testing.TB, d Dispatcher, tweak func(*Config)) (*testServer, *pipeListener) {
	t.Helper()
	ln := newPipeListener()
	return serveOn(t, ln, d, tweak), ln
}

func serveOn(t testing.TB, ln net.Listener, d Dispatcher, tweak func(*Config)) *testServer {
	t.Helper()
	logs := &syncBuffer{}
	cfg := Config{
		Name: "PLAINTEXT", Dispatcher: d,
		Logger:       slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		MaxFrameSize: 1 << 20, MaxConnections: 16, MaxInFlight: 4,
		IdleTimeout: 10 * time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second,
	}
	if tweak != nil {
		tweak(&cfg)
	}
	s := &testServer{Server: New(cfg), addr: ln.Addr().String(), done: make(chan error, 1), logs: logs}
	go func() { s.done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-s.done; err != ErrServerClosed {
			t.Errorf("Serve returned %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return s
}

// pipeListener is a net.Listener whose connections are net.Pipe pairs.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// pipeAddr is the address of both ends of every pipe connection.
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// dialPipe connects a client to the server listening on l.
func dialPipe(t testing.TB, l *pipeListener) *client {
	t.Helper()
	server, nc := net.Pipe()
	select {
	case l.conns <- server:
	case <-l.closed:
		t.Fatal("dial: listener closed")
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc}
}

type client struct {
	t  testing.TB
	nc net.Conn
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc}
}

func (c *client) write(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// send writes req as a well-formed frame.
func (c *client) send(req kmsg.Request, corrID int32) {
	c.t.Helper()
	c.write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("test-client")).AppendRequest(nil, req, corrID))
}

// readFrame returns the next response frame (without length prefix), or nil at EOF.
func (c *client) readFrame() []byte {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var prefix [4]byte
	if _, err := io.ReadFull(c.nc, prefix[:]); err != nil {
		if err == io.EOF || isReset(err) {
			return nil
		}
		c.t.Fatalf("read: %v", err)
	}
	frame := make([]byte, binary.BigEndian.Uint32(prefix[:]))
	if _, err := io.ReadFull(c.nc, frame); err != nil {
		c.t.Fatalf("read body: %v", err)
	}
	return frame
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

// expectClosed asserts that the server closes the connection without sending anything more.
func (c *client) expectClosed() {
	c.t.Helper()
	if f := c.readFrame(); f != nil {
		c.t.Fatalf("expected the connection to close, got a %d-byte frame", len(f))
	}
}

// readResponse reads a frame and decodes it as resp (header v0 or v1 per flexible).
func (c *client) readResponse(resp kmsg.Response) int32 {
	c.t.Helper()
	f := c.readFrame()
	if f == nil {
		c.t.Fatal("connection closed, expected a response")
	}
	corr := int32(binary.BigEndian.Uint32(f))
	body := f[4:]
	if resp.IsFlexible() && resp.Key() != apiVersionsKey {
		if body[0] != 0 {
			c.t.Fatalf("response header tags = %d", body[0])
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		c.t.Fatalf("decode %T: %v", resp, err)
	}
	return corr
}

// waitBusy waits until the server has n connections and none of them is idle (evictIdle).
func (s *testServer) waitBusy(t *testing.T, n int) {
	t.Helper()
	waitFor(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for c := range s.conns {
			if c.idleFor(time.Now()) != 0 {
				return false
			}
		}
		return len(s.conns) == n
	})
}
