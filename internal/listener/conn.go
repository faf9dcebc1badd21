package listener

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/bufpool"
)

// conn serves one client connection: a reader goroutine parses frames and starts handlers, a
// writer goroutine sends their responses in request order.
type conn struct {
	s   *Server
	nc  net.Conn
	cc  *ConnContext
	log *slog.Logger

	ctx    context.Context // cancelled when the connection is torn down
	cancel context.CancelFunc
	// waitCtx is ctx for AbandonedOnClose handlers, also cancelled when the client is gone.
	waitCtx    context.Context
	waitCancel context.CancelFunc

	slots    chan *slot    // requests in arrival order, to the writer
	sem      chan struct{} // one token per request read and not yet answered
	handlers sync.WaitGroup

	drainOnce  sync.Once
	drainCh    chan struct{} // closed by Shutdown: read no more requests
	writerDone chan struct{}
	// stopOnce closes readStop when reading must stop: on drain or when the writer is gone.
	stopOnce sync.Once
	readStop chan struct{}
	// writing is the slot the writer was on when it returned (read after writerDone).
	writing *slot

	opened   time.Time
	requests int
	// peerGone is set by the reader when the client closed the connection or stopped sending:
	// nobody will read the answers of requests still in progress, so those that only wait on
	// its behalf (AbandonedOnClose) are cancelled at once instead of holding a parked
	// JoinGroup or a long-poll Fetch to the end of its wait.
	peerGone bool
}

// slot is one request's place in the response order.
type slot struct {
	r      *request
	resp   kmsg.Response
	err    error  // close the connection after writing resp
	reject string // close the connection without answering this request
	done   chan struct{}
	mem    int64     // bytes taken from the server's budget for this request's frame
	read   time.Time // when the frame arrived
	key    int16     // api key, also for rejected frames
	// started closes when a pipelined request's ordered part is done (nil for others).
	started   chan struct{}
	startOnce sync.Once
	// frame is the pooled buffer the request was read into, to reuse once the request is
	// finished; nil when its handler may keep referring to it.
	frame []byte
}

// markStarted closes started once.
func (sl *slot) markStarted() { sl.startOnce.Do(func() { close(sl.started) }) }

func (s *Server) newConn(nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	waitCtx, waitCancel := context.WithCancel(ctx)
	cc := &ConnContext{ID: s.nextID.Add(1), Listener: s.cfg.Name, RemoteAddr: nc.RemoteAddr(), LocalAddr: nc.LocalAddr()}
	inflight := max(s.cfg.MaxInFlight, 1)
	return &conn{
		s: s, nc: nc, cc: cc,
		log:        s.log.With("conn", cc.ID, "remote", nc.RemoteAddr().String()),
		ctx:        ctx,
		cancel:     cancel,
		waitCtx:    waitCtx,
		waitCancel: waitCancel,
		slots:      make(chan *slot, inflight),
		sem:        make(chan struct{}, inflight),
		drainCh:    make(chan struct{}),
		writerDone: make(chan struct{}),
		readStop:   make(chan struct{}),
		opened:     time.Now(),
	}
}

func (c *conn) serve() {
	obs := c.s.cfg.Observer
	obs.ConnOpened(c.s.cfg.Name)
	defer obs.ConnClosed(c.s.cfg.Name)
	logLimited(c.log, c.s.cfg.LogLimiter, slog.LevelInfo, eventConnOpened, "connection opened")
	go c.writeLoop()
	reason := c.readLoop()
	close(c.slots)
	if c.peerGone {
		c.waitCancel()
	}
	<-c.writerDone
	c.nc.Close()
	c.cancel()
	c.handlers.Wait()
	// Handlers are done with their frames: settle what the writer did not.
	if c.writing != nil {
		c.finish(c.writing, 0, Abandoned)
	}
	for sl := range c.slots {
		c.finish(sl, 0, Abandoned)
	}
	name, version := c.cc.ClientSoftware()
	logLimited(c.log, c.s.cfg.LogLimiter, slog.LevelInfo, eventConnClosed, "connection closed", "reason", reason, "client_id", c.cc.ClientID(),
		"client_software", name, "client_software_version", version,
		"requests", c.requests, "duration", time.Since(c.opened).Round(time.Millisecond))
}

// drain stops reading new requests; requests already read are answered.
func (c *conn) drain() {
	c.drainOnce.Do(func() {
		close(c.drainCh)
		c.stopReading()
		c.nc.SetReadDeadline(time.Now()) // unblock a pending read
	})
}

func (c *conn) stopReading() { c.stopOnce.Do(func() { close(c.readStop) }) }

// finish settles a slot once, after its handler has returned and its response has been
// written or abandoned: its frame bytes go back to the budget, its response's memory to the
// handler (Response.Release), and the observer learns the outcome.
func (c *conn) finish(sl *slot, responseBytes int, outcome Outcome) {
	if sl.read.IsZero() {
		return
	}
	if sl.mem > 0 && c.s.cfg.Budget != nil {
		c.s.cfg.Budget.release(sl.mem)
	}
	releaseResponse(sl.resp)
	if sl.frame != nil {
		sl.r.req = nil // aliases the frame
		bufpool.Put(sl.frame)
		sl.frame = nil
	}
	c.s.cfg.Observer.RequestDone(c.s.cfg.Name, sl.key, time.Since(sl.read), responseBytes, outcome)
	sl.read = time.Time{}
}

// abort tears the connection down at once.
func (c *conn) abort() {
	c.drain()
	c.cancel()
	c.nc.Close()
}

func (c *conn) draining() bool {
	select {
	case <-c.drainCh:
		return true
	default:
		return false
	}
}

// readLoop reads and schedules requests until the connection must stop; it returns why.
func (c *conn) readLoop() string {
	sched := newSchedule(cap(c.sem))
	for {
		select {
		case c.sem <- struct{}{}:
		case <-c.readStop:
			return c.stopReason()
		}
		frame, pooled, mem, reason := c.readFrame()
		if frame == nil {
			return reason
		}
		c.requests++
		c.s.cfg.Observer.RequestRead(c.s.cfg.Name, len(frame))
		sl := &slot{done: make(chan struct{}), mem: mem, read: time.Now(), key: frameKey(frame)}
		r, err := parseFrameSafe(c.cc, c.s.cfg.Dispatcher, frame)
		sl.r = r
		var rej *rejection
		switch {
		case errors.As(err, &rej):
			sl.reject = rej.reason
			c.s.cfg.Observer.Refused(c.s.cfg.Name, rej.kind)
			close(sl.done)
			c.slots <- sl
			return rej.reason
		case r.invalid != nil:
			sl.resp = r.invalid
			close(sl.done)
		default:
			if !r.h.Undecoded {
				c.cc.setClientID(r.clientID)
			}
			if r.h.Pipelined {
				sl.started = make(chan struct{})
			}
			if r.h.FrameReusable && pooled {
				sl.frame = frame
			}
			gates := sched.add(r.h, sl.done, sl.started)
			c.handlers.Add(1)
			go c.run(sl, gates)
		}
		c.slots <- sl // never blocks: sem bounds the slots outstanding to its capacity
	}
}

// frameKey is the api key of a frame, or -1 when it is too short to have one.
func frameKey(frame []byte) int16 {
	if len(frame) < 2 {
		return -1
	}
	return int16(binary.BigEndian.Uint16(frame))
}

// readFrame returns the next frame body, whether it was read into a pooled buffer, and the
// budget bytes it holds, or nil and the reason reading stopped. Large frames are read into
// pooled buffers (not zeroed: the frame is read over them), which go back to the pool when
// the request is finished if its handler allows (Handler.FrameReusable).
func (c *conn) readFrame() ([]byte, bool, int64, string) {
	var prefix [4]byte
	c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.IdleTimeout))
	if c.draining() { // drain may have set its deadline just before ours
		return nil, false, 0, "shutdown"
	}
	if _, err := io.ReadFull(c.nc, prefix[:]); err != nil {
		return nil, false, 0, c.readError(err, "idle timeout")
	}
	size := int32(binary.BigEndian.Uint32(prefix[:]))
	if size <= 0 || int(size) > c.s.cfg.MaxFrameSize {
		c.s.cfg.Observer.Refused(c.s.cfg.Name, RefusedFrameLength)
		logLimited(c.log, c.s.cfg.LogLimiter, slog.LevelWarn, eventRequestRefused, "closing connection: bad frame length",
			"reason", RefusedFrameLength, "length", size, "max", c.s.cfg.MaxFrameSize)
		return nil, false, 0, fmt.Sprintf("frame length %d outside 1..%d", size, c.s.cfg.MaxFrameSize)
	}
	var mem int64
	if b := c.s.cfg.Budget; b != nil {
		if !b.acquire(int64(size), c.readStop) {
			return nil, false, 0, c.stopReason()
		}
		mem = int64(size)
	}
	pooled := size >= bufpool.MinSize
	var frame []byte
	if pooled {
		frame = bufpool.Get(int(size))[:size]
	} else {
		frame = make([]byte, size)
	}
	c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.ReadTimeout))
	if _, err := io.ReadFull(c.nc, frame); err != nil {
		if mem > 0 {
			c.s.cfg.Budget.release(mem)
		}
		if pooled {
			bufpool.Put(frame)
		}
		return nil, false, 0, c.readError(err, "read timeout")
	}
	return frame, pooled, mem, ""
}

func (c *conn) stopReason() string {
	if c.draining() {
		return "shutdown"
	}
	return "closed by the response writer"
}

func (c *conn) readError(err error, timeoutReason string) string {
	select {
	case <-c.readStop:
		return c.stopReason()
	default:
	}
	c.peerGone = true
	switch {
	case errors.Is(err, io.EOF):
		return "client closed the connection"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "client closed the connection mid-frame"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return timeoutReason
	default:
		return "read error: " + err.Error()
	}
}

// run waits for the requests sl must follow, then serves it.
func (c *conn) run(sl *slot, gates []chan struct{}) {
	defer c.handlers.Done()
	defer close(sl.done)
	ctx := c.ctx
	if sl.r.h.AbandonedOnClose {
		ctx = c.waitCtx
	}
	if sl.started != nil {
		defer sl.markStarted() // before done, at the latest
		ctx = context.WithValue(ctx, startKey{}, sl)
	}
	for _, g := range gates {
		select {
		case <-g:
		case <-ctx.Done():
			sl.err = ctx.Err()
			return
		}
	}
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("handler panicked", "api", kmsg.NameForKey(sl.r.key), "version", sl.r.version,
				"panic", p, "stack", string(debug.Stack()))
			sl.resp, sl.err = nil, fmt.Errorf("handler panicked: %v", p)
		}
	}()
	start := time.Now()
	sl.resp, sl.err = sl.r.h.Serve(ctx, c.cc, sl.r.req)
	if r, ok := sl.resp.(*Response); ok && r.Response == nil {
		releaseResponse(r) // an empty wrapper is no response
		sl.resp = nil
	}
	if c.log.Enabled(c.ctx, slog.LevelDebug) {
		c.log.Debug("request served", "api", kmsg.NameForKey(sl.r.key), "version", sl.r.version,
			"correlation_id", sl.r.corrID, "duration", time.Since(start), "err", sl.err)
	}
}

// writeLoop writes responses in request order until the slots run out or the connection must
// close.
func (c *conn) writeLoop() {
	defer close(c.writerDone)
	defer c.stopReading()
	var buf []byte
	for sl := range c.slots {
		c.writing = sl
		select {
		case <-sl.done:
		case <-c.ctx.Done():
			return
		}
		if sl.reject != "" {
			logLimited(c.log, c.s.cfg.LogLimiter, slog.LevelWarn, eventRequestRefused, "closing connection: request rejected",
				"reason", sl.reject, "client_id", c.cc.ClientID())
			c.finish(sl, 0, Rejected)
			c.nc.Close()
			return
		}
		outcome, written := NoResponse, 0
		if sl.resp != nil {
			if sl.resp.Key() != sl.r.key {
				c.log.Error("handler answered with the wrong response type", "api", kmsg.NameForKey(sl.r.key), "response", kmsg.NameForKey(sl.resp.Key()))
				c.finish(sl, 0, Failed)
				c.nc.Close()
				return
			}
			resp, hint := unwrapResponse(sl.resp)
			out := appendResponse(writeBuffer(buf, hint), sl.r.corrID, resp)
			c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
			_, err := c.nc.Write(out)
			buf = keepWriteBuffer(buf, out)
			if err != nil {
				c.log.Info("response write failed", "err", err)
				c.finish(sl, 0, Failed)
				c.nc.Close()
				return
			}
			outcome, written = Answered, len(out)
			if sl.r.invalid != nil {
				outcome = Invalid
			}
		}
		if sl.err != nil {
			outcome = Failed
		}
		c.finish(sl, written, outcome)
		<-c.sem
		if sl.err != nil {
			if !errors.Is(sl.err, context.Canceled) {
				c.log.Warn("closing connection after handler error", "api", kmsg.NameForKey(sl.r.key), "version", sl.r.version, "err", sl.err)
			}
			c.nc.Close()
			return
		}
	}
}

type startKey struct{}

// Started tells the listener that a pipelined handler (Handler.Pipelined) serving the request
// of ctx has done everything that must happen in request order: the next pipelined request
// of the connection may start. Calling it again, or from other handlers, does nothing.
func Started(ctx context.Context) {
	if sl, ok := ctx.Value(startKey{}).(*slot); ok {
		sl.markStarted()
	}
}
