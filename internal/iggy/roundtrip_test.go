package iggy

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// swapSocket replaces cn's socket with wrap(socket), as if it had been dialled that way.
func swapSocket(t *testing.T, cn *Conn, wrap func(net.Conn) net.Conn) {
	t.Helper()
	if err := cn.lock(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	cn.nc = wrap(cn.nc)
	cn.br.Reset(cn.nc) // nothing is buffered between exchanges
	cn.unlock()
}

// gatedInterrupt is a socket on which the interrupt of a cancelled context (a deadline in the
// past) waits at a gate, so that a test decides when it lands.
type gatedInterrupt struct {
	net.Conn
	once    sync.Once
	entered chan struct{} // closed once the interrupt reached the socket
	release chan struct{} // the test closes it to let the interrupt land
	landed  chan struct{} // closed once the interrupt was applied

	// readAfter: bytes read since the interrupt entered; readAll is closed once they reach
	// want.
	readAfter, want int
	readAll         chan struct{}
}

func (g *gatedInterrupt) Read(b []byte) (int, error) {
	n, err := g.Conn.Read(b)
	select {
	case <-g.entered:
		if g.readAfter < g.want && g.readAfter+n >= g.want {
			close(g.readAll)
		}
		g.readAfter += n
	default:
	}
	return n, err
}

func (g *gatedInterrupt) SetDeadline(d time.Time) error {
	if d.IsZero() || d.After(time.Now()) {
		return g.Conn.SetDeadline(d)
	}
	err := errors.New("a second interrupt on this socket")
	g.once.Do(func() {
		close(g.entered)
		<-g.release
		err = g.Conn.SetDeadline(d)
		close(g.landed)
	})
	return err
}

// A request whose context is cancelled just as its reply arrives succeeds once the interrupt
// that the cancellation started has landed; that interrupt cannot break the next request on
// the connection, which carries it without a reconnect (nothing was in flight).
func TestLateInterruptDoesNotHitTheNextRequest(t *testing.T) {
	gotGet, replyGet := make(chan struct{}), make(chan struct{})
	gotSend, replySend := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	wait := func(c chan struct{}) bool {
		select {
		case <-c:
			return true
		case <-done:
			return false
		}
	}
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		switch {
		case h.Operation == wire.OpRegister:
			return nil
		case h.Operation == wire.OpSendMessages:
			close(gotSend)
			if !wait(replySend) {
				return nil
			}
			return reply(h, 0, wire.AppendSendConfirmations(nil, []SendConfirmation{{BaseOffset: 1}}))
		case h.Code == wire.CodeGetStream:
			close(gotGet)
			if !wait(replyGet) {
				return nil
			}
			return reply(h, 0, streamPayload("s"))
		}
		return reply(h, 0, nil) // logout
	})
	t.Cleanup(func() { close(done) })
	cn := dialScripted(t, s)
	gate := &gatedInterrupt{entered: make(chan struct{}), release: make(chan struct{}), landed: make(chan struct{}),
		want: wire.HeaderSize + len(streamPayload("s")), readAll: make(chan struct{})}
	swapSocket(t, cn, func(nc net.Conn) net.Conn { gate.Conn = nc; return gate })
	t.Cleanup(func() {
		select {
		case <-gate.release:
		default:
			close(gate.release)
		}
	})

	ctx, cancel := context.WithCancel(testCtx(t))
	getErr := make(chan error, 1)
	go func() { _, err := cn.GetStream(ctx, ID(1)); getErr <- err }()
	<-gotGet
	cancel()
	<-gate.entered // the interrupt has started but not landed
	close(replyGet)
	<-gate.readAll      // the reply has been read
	close(gate.release) // the late interrupt lands after the reply
	<-gate.landed
	if err := <-getErr; err != nil {
		t.Fatalf("GetStream answered before its interrupt landed: %v", err)
	}

	sendErr := make(chan error, 1)
	go func() {
		_, err := cn.SendMessages(testCtx(t), ID(1), ID(1), 0, []Message{{Payload: []byte("x")}})
		sendErr <- err
	}()
	<-gotSend
	close(replySend)
	if err := <-sendErr; err != nil {
		t.Fatalf("the send after a late interrupt: %v", err)
	}
	if n := s.logins(); n != 1 {
		t.Fatalf("%d logins: the late interrupt cost a reconnect", n)
	}
}

// failFirstWrite is a socket whose first write fails before writing anything.
type failFirstWrite struct {
	net.Conn
	failed bool
}

func (f *failFirstWrite) Write(b []byte) (int, error) {
	if !f.failed {
		f.failed = true
		return 0, syscall.EPIPE
	}
	return f.Conn.Write(b)
}

// A send whose write failed before its first byte cannot have landed: it is replayed on a new
// connection instead of being reported as "maybe applied".
func TestWriteOfNoByteIsNotSent(t *testing.T) {
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		if h.Operation == wire.OpSendMessages {
			return reply(h, 0, wire.AppendSendConfirmations(nil, []SendConfirmation{{BaseOffset: 3}}))
		}
		return nil
	})
	cn := dialScripted(t, s)
	swapSocket(t, cn, func(nc net.Conn) net.Conn { return &failFirstWrite{Conn: nc} })
	conf, err := cn.SendMessages(testCtx(t), ID(1), ID(1), 0, []Message{{Payload: []byte("x")}})
	if err != nil || conf.BaseOffset != 3 {
		t.Fatalf("send after a failed empty write: %+v, %v (maybe applied: %v)", conf, err, MaybeApplied(err))
	}
	var sends []int
	for _, r := range s.requests() {
		if r.h.Operation == wire.OpSendMessages {
			sends = append(sends, r.conn)
		}
	}
	if len(sends) != 1 || sends[0] != 1 {
		t.Fatalf("sends reached the server on connections %v, want once on the new connection 1", sends)
	}
}
