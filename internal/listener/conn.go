package listener

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/bufpool"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
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

	acct     *account // this connection's share of the request memory budget
	opened   time.Time
	requests int
	// idleSince is when the reader began waiting for the next frame (unix nanoseconds), 0
	// while it reads one; lastAnswer is when the writer last wrote a response. Together with
	// the requests in flight they say how long the connection has been idle (idleFor).
	idleSince, lastAnswer atomic.Int64
	// evicted is set when the server closes the connection to admit a new one (evict.go).
	evicted atomic.Bool
	// peerGone is set by the reader when the client closed the connection or stopped sending:
	// nobody will read the answers of requests still in progress, so those that only wait on
	// its behalf (AbandonedOnClose) are cancelled at once instead of holding a parked
	// JoinGroup or a long-poll Fetch to the end of its wait.
	peerGone bool
	// preAuth counts what a SASL connection did since it last lacked a current identity
	// (saslGate).
	preAuth preAuthState
	// sessionChecked is when the identity was last re-verified (Config.SessionCheck), and
	// checkedIdentity the identity it was.
	sessionChecked  time.Time
	checkedIdentity Identity
}

// preAuthState is what an unauthenticated connection of a SASL listener has sent.
type preAuthState struct {
	epoch        time.Time // Expires of the identity the state belongs to (zero: never authenticated)
	apiVersions  int
	handshake    bool
	authenticate bool
}

// slot is one request's place in the response order.
type slot struct {
	r      *request
	resp   kmsg.Response
	err    error  // close the connection after writing resp
	reject string // close the connection without answering this request
	done   chan struct{}
	mem    *reservation // request memory held for this request (docs/LIMITS.md)
	read   time.Time    // when the frame arrived
	key    int16        // api key, also for rejected frames
	// started closes when a pipelined request's ordered part is done (nil for others).
	started chan struct{}
	// preAuth: read before the connection authenticated; it only serves the client, so it is
	// abandoned when the client goes away (run).
	preAuth   bool
	startOnce sync.Once
	// reserved is what the handler reserved for its answer (Reserve), which the response's
	// own size replaces rather than adds to.
	reserved atomic.Int64
	// frame is the pooled buffer the request was read into, to reuse once the request is
	// finished; nil when its handler may keep referring to it or took it (TakeFrame).
	frameMu sync.Mutex
	frame   []byte
	// answerWait bounds ReserveAnswer's wait for memory (the read timeout).
	answerWait time.Duration
}

// markStarted closes started once.
func (sl *slot) markStarted() { sl.startOnce.Do(func() { close(sl.started) }) }

func (s *Server) newConn(nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	waitCtx, waitCancel := context.WithCancel(ctx)
	cc := &ConnContext{ID: s.nextID.Add(1), Listener: s.cfg.Name, RemoteAddr: nc.RemoteAddr(), LocalAddr: nc.LocalAddr()}
	inflight := max(s.cfg.MaxInFlight, 1)
	if s.cfg.TLS != nil {
		nc = tls.Server(nc, s.cfg.TLS) // the handshake runs in serve, on the connection's goroutine
	}
	c := &conn{
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
		acct:       s.cfg.Budget.openAccount(peerHost(nc.RemoteAddr())),
	}
	c.idleSince.Store(c.opened.UnixNano()) // idle until its first frame's length has arrived
	return c
}

func (c *conn) serve() {
	obs := c.s.cfg.Observer
	obs.ConnOpened(c.s.cfg.Name)
	defer obs.ConnClosed(c.s.cfg.Name)
	defer c.acct.close()
	c.s.cfg.LogLimiter.Log(c.log, slog.LevelInfo, eventConnOpened, "connection opened")
	if reason := c.secure(); reason != "" {
		c.nc.Close()
		c.cancel()
		c.log.Warn("connection closed", "reason", reason, "duration", time.Since(c.opened).Round(time.Millisecond))
		return
	}
	go c.writeLoop()
	reason := c.readLoopSafe()
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
	c.s.cfg.LogLimiter.Log(c.log, slog.LevelInfo, eventConnClosed, "connection closed", "reason", reason, "client_id", c.cc.ClientID(),
		"client_software", name, "client_software_version", version,
		"requests", c.requests, "duration", time.Since(c.opened).Round(time.Millisecond))
}

// secure completes the TLS handshake and establishes the client-certificate identity, if the
// listener asks for them; it returns why the connection must close, or "".
func (c *conn) secure() string {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.s.cfg.ReadTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return "TLS handshake failed: " + err.Error()
	}
	if f := c.s.cfg.ClientIdentity; f != nil {
		if err := f(ctx, c.cc, tc.ConnectionState()); err != nil {
			return "client certificate refused: " + err.Error()
		}
	}
	return ""
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
	sl.mem.close()
	releaseResponse(sl.resp)
	sl.frameMu.Lock()
	if sl.frame != nil {
		sl.r.req = nil // aliases the frame
		bufpool.Put(sl.frame)
		sl.frame = nil
	}
	sl.frameMu.Unlock()
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

// reading is what the read loop holds of the request it is reading and has not handed to
// the writer yet: a frame and its reservation, then the slot they moved to. readLoopSafe
// settles it when the loop panics, so that a panic returns the request's memory to the budget
// (a reservation never leaks) and the writer and serve still see every slot end.
type reading struct {
	frame   []byte
	pooled  bool
	mem     *reservation
	sl      *slot // the slot mem moved to, not sent to c.slots yet
	started bool  // sl's handler runs (it closes sl.done)
	done    bool  // sl.done was closed
}

// readLoopSafe is readLoop with a panic recovered into the end of this one connection
// (logged with its stack and counted, internal/supervise, component "listener_reader"), the
// request being read settled: its reservation released, or its slot ended with the panic as
// its error (the writer closes the connection).
func (c *conn) readLoopSafe() (reason string) {
	var cur reading
	var err error
	defer func() {
		if err == nil {
			return
		}
		reason = err.Error()
		switch {
		case cur.sl != nil:
			if !cur.started {
				cur.sl.err = err
				if !cur.done {
					close(cur.sl.done)
				}
			}
			c.slots <- cur.sl // never blocks: its semaphore token was taken
		case cur.mem != nil:
			cur.mem.close()
			if cur.pooled && cur.frame != nil {
				bufpool.Put(cur.frame)
			}
		}
	}()
	defer supervise.Recover(c.log, "listener_reader", &err)
	return c.readLoop(&cur)
}

// readLoop reads and schedules requests until the connection must stop; it returns why. cur
// is kept up to date with what it holds of the request being read (readLoopSafe).
func (c *conn) readLoop(cur *reading) string {
	sched := newSchedule(cap(c.sem))
	// pending is a request that may change the connection's identity, still running: the next
	// frame is read meanwhile (so a client that goes away is noticed and its attempt
	// abandoned), but only checked and served once pending has finished.
	var pending *slot
	for {
		select {
		case c.sem <- struct{}{}:
		case <-c.readStop:
			return c.stopReason()
		}
		frame, pooled, mem, reason := c.readFrame(pending)
		pending = nil
		if frame == nil {
			return reason
		}
		*cur = reading{frame: frame, pooled: pooled, mem: mem}
		if ok, reason := c.reserveDecoded(mem, frame); !ok {
			mem.close()
			if pooled {
				bufpool.Put(frame)
			}
			return reason
		}
		c.requests++
		c.s.cfg.Observer.RequestRead(c.s.cfg.Name, len(frame))
		sl := &slot{done: make(chan struct{}), mem: mem, read: time.Now(), key: frameKey(frame), answerWait: c.s.cfg.ReadTimeout}
		*cur = reading{sl: sl} // the slot holds the reservation now
		var r *request
		serial, preAuth, err := c.saslGate(sl.key)
		sl.preAuth = preAuth
		if err == nil && !preAuth && sl.key != saslHandshakeKey && sl.key != saslAuthenticateKey {
			err = c.checkSession()
		}
		if err == nil {
			r, err = parseFrameSafe(c.cc, c.s.cfg.Dispatcher, frame)
		}
		sl.r = r
		if r != nil && r.req != nil && !r.h.Undecoded {
			// The decoded request is in memory now: hold what it takes, not the estimate.
			mem.shrinkTo(int64(cap(frame)) + sizeOf(reflect.ValueOf(r.req), false))
		}
		var rej *rejection
		switch {
		case errors.As(err, &rej):
			sl.reject = rej.reason
			c.s.cfg.Observer.Refused(c.s.cfg.Name, rej.kind)
			close(sl.done)
			cur.done = true
			c.slots <- sl
			*cur = reading{}
			return rej.reason
		case r.invalid != nil:
			sl.resp = r.invalid
			close(sl.done)
			cur.done = true
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
			cur.started = true
		}
		c.slots <- sl // never blocks: sem bounds the slots outstanding to its capacity
		*cur = reading{}
		if serial {
			// The identity this request may establish decides what the next one may do.
			pending = sl
		}
	}
}

// SASL requests that may be read before the connection has an identity.
const (
	saslHandshakeKey    = 17
	saslAuthenticateKey = 36
)

// maxPreAuthApiVersions is how many ApiVersions requests an unauthenticated connection may
// send, all before its SaslHandshake: Kafka answers one, and another only after a first that
// asked for a version it does not support (the client's downgrade); the gateway allows that
// one repeat whatever the version.
const maxPreAuthApiVersions = 2

// saslGate applies the SASL listener rules (Config.SASL) to a request with api key key: it
// returns a rejection for a request that may not be served now, whether the request must
// finish before the next one is read (it may change the connection's identity), and whether
// it is served before authentication.
//
// Without a current identity a connection may send what one authentication takes, in Kafka's
// order (SaslServerAuthenticator): ApiVersions (at most maxPreAuthApiVersions, none after
// the handshake), one SaslHandshake, one SaslAuthenticate. Anything more closes it, as does
// Kafka, so an unauthenticated connection cannot stay open by repeating ApiVersions; readFrame
// bounds its time (preAuthDeadline).
func (c *conn) saslGate(key int16) (serial, preAuth bool, err error) {
	if !c.s.cfg.SASL {
		return false, false, nil
	}
	sasl := key == saslHandshakeKey || key == saslAuthenticateKey
	if c.authenticated() {
		return sasl, false, nil
	}
	id := c.cc.Identity()
	if !c.preAuth.epoch.Equal(id.Expires) { // a session ended: it may authenticate once more
		c.preAuth = preAuthState{epoch: id.Expires}
	}
	p := &c.preAuth
	switch key {
	case apiVersionsKey:
		if p.handshake || p.apiVersions >= maxPreAuthApiVersions {
			return false, true, reject(RefusedUnauthenticated, "ApiVersions repeated before SASL authentication")
		}
		p.apiVersions++
	case saslHandshakeKey:
		if p.handshake {
			return false, true, reject(RefusedUnauthenticated, "SaslHandshake repeated before SASL authentication")
		}
		p.handshake = true
	case saslAuthenticateKey:
		if p.authenticate {
			return false, true, reject(RefusedUnauthenticated, "SaslAuthenticate repeated before SASL authentication")
		}
		p.authenticate = true
	default:
		if id.Authenticated() {
			return false, true, reject(RefusedUnauthenticated, "SASL session expired without re-authentication")
		}
		return false, true, reject(RefusedUnauthenticated, "%s before SASL authentication", kmsg.NameForKey(key))
	}
	return true, true, nil
}

// checkSession re-verifies the connection's identity with Config.SessionCheck when it is due:
// the identity changed since the last check, or SessionCheckInterval has passed.
func (c *conn) checkSession() error {
	check := c.s.cfg.SessionCheck
	id := c.cc.Identity()
	if check == nil || !id.Authenticated() || id.Anonymous {
		return nil
	}
	now := time.Now()
	if id == c.checkedIdentity && now.Sub(c.sessionChecked) < c.s.cfg.SessionCheckInterval {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.s.cfg.ReadTimeout)
	defer cancel()
	if err := check(ctx, id); err != nil {
		return reject(RefusedUnauthenticated, "session of %q no longer valid: %v", id.User, err)
	}
	c.sessionChecked, c.checkedIdentity = now, id
	return nil
}

// preAuthDeadline is when a SASL connection without a current identity is closed unless it
// authenticates: ReadTimeout after it opened, or after its session ended.
func (c *conn) preAuthDeadline() time.Time {
	start := c.opened
	if id := c.cc.Identity(); id.Authenticated() {
		start = id.Expires
	}
	return start.Add(c.s.cfg.ReadTimeout)
}

// frameDeadline is when the next frame's length must have arrived.
func (c *conn) frameDeadline(firstBy time.Time) time.Time {
	d := time.Now().Add(c.s.cfg.IdleTimeout)
	if c.s.cfg.SASL && !c.authenticated() {
		d = earliest(time.Now().Add(c.s.cfg.ReadTimeout), c.preAuthDeadline())
	}
	return earliest(d, firstBy)
}

// authenticated reports whether the connection has an identity whose session has not expired.
func (c *conn) authenticated() bool {
	id := c.cc.Identity()
	return id.Authenticated() && (id.Expires.IsZero() || time.Now().Before(id.Expires))
}

// frameKey is the api key of a frame, or -1 when it is too short to have one.
func frameKey(frame []byte) int16 {
	if len(frame) < 2 {
		return -1
	}
	return int16(binary.BigEndian.Uint16(frame))
}

// frameChunk is how much of a frame is read at a time: memory is taken as bytes arrive, so a
// peer announcing a large frame and sending it slowly holds only what it sent (docs/LIMITS.md).
const frameChunk = 256 << 10

// frameFirstBuffer is the largest frame read into a buffer of its whole size at once; larger
// frames start in a frameChunk buffer that grows (doubling) as their bytes arrive. A buffer
// is memory as soon as it is allocated (a reused one is resident, a fresh one is zeroed when
// the heap reuses its pages), so allocating the whole announced frame at once let peers that
// announce 100 MiB frames and send them slowly hold gigabytes the budget never saw
// (issue 25). 1 MiB holds a default-sized Produce request (max.request.size) in one buffer,
// without copies.
const frameFirstBuffer = 1 << 20

// readFrame returns the next frame body, whether it was read into a pooled buffer, and the
// request memory it holds, or nil and the reason reading stopped. Large frames are read into
// pooled buffers (not zeroed: the frame is read over them), which go back to the pool when
// the request is finished if its handler allows (Handler.FrameReusable). The reservation
// covers every buffer's capacity before the buffer is taken, and both buffers while a
// growing frame is copied.
//
// With pending (a request that may change the identity, still running), the frame's length is
// read while pending runs, so that a client closing the connection is seen at once; the limits
// of the rest follow the identity pending leaves.
func (c *conn) readFrame(pending *slot) ([]byte, bool, *reservation, string) {
	var prefix [4]byte
	firstBy := c.firstRequestDeadline()
	c.nc.SetReadDeadline(c.frameDeadline(firstBy))
	if c.draining() { // drain may have set its deadline just before ours
		return nil, false, nil, c.stopReason()
	}
	c.idleSince.Store(time.Now().UnixNano())
	var stopWatch, watched chan struct{}
	if pending != nil {
		// Once pending has finished, the wait for the length follows the new identity.
		stopWatch, watched = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-pending.done:
				c.nc.SetReadDeadline(c.frameDeadline(firstBy))
				if c.draining() { // keep drain's deadline
					c.nc.SetReadDeadline(time.Now())
				}
			case <-stopWatch:
			}
		}()
	}
	_, err := io.ReadFull(c.nc, prefix[:])
	if pending != nil {
		close(stopWatch)
		<-watched
	}
	c.idleSince.Store(0)
	if err != nil {
		return nil, false, nil, c.readError(err, c.timeoutReason(c.idleReason()))
	}
	if pending != nil {
		select {
		case <-pending.done:
		case <-c.readStop:
			return nil, false, nil, c.stopReason()
		}
	}
	maxSize := c.s.cfg.MaxFrameSize
	if c.s.cfg.SASL && !c.authenticated() && c.s.cfg.PreAuthMaxFrameSize > 0 {
		maxSize = c.s.cfg.PreAuthMaxFrameSize
	}
	size := int32(binary.BigEndian.Uint32(prefix[:]))
	if size <= 0 || int(size) > maxSize {
		c.s.cfg.Observer.Refused(c.s.cfg.Name, RefusedFrameLength)
		c.s.cfg.LogLimiter.Log(c.log, slog.LevelWarn, eventRequestRefused, "closing connection: bad frame length",
			"reason", RefusedFrameLength, "length", size, "max", maxSize)
		return nil, false, nil, fmt.Sprintf("frame length %d outside 1..%d", size, maxSize)
	}
	mem := &reservation{acct: c.acct}
	pooled := size >= bufpool.MinSize
	bodyBy := earliest(time.Now().Add(c.s.cfg.ReadTimeout), firstBy)
	if c.s.cfg.SASL && !c.authenticated() {
		bodyBy = earliest(bodyBy, c.preAuthDeadline())
	}
	c.nc.SetReadDeadline(bodyBy)
	var frame []byte
	if !pooled {
		if !mem.growTo(int64(size), c.readStop, nil) {
			return c.dropFrame(nil, false, mem, c.stopReason())
		}
		frame = make([]byte, size)
		if _, err := io.ReadFull(c.nc, frame); err != nil {
			return c.dropFrame(nil, false, mem, c.readError(err, c.timeoutReason(c.readTimeoutReason())))
		}
		return frame, false, mem, ""
	}
	for read := 0; read < int(size); {
		end := min(read+frameChunk, int(size))
		if end > cap(frame) {
			var ok bool
			next := int(size)
			if size > frameFirstBuffer {
				next = min(max(2*cap(frame), end), int(size))
			}
			if frame, ok = c.growFrame(frame, read, next, mem); !ok {
				return c.dropFrame(frame, true, mem, c.stopReasonOr("request memory not available within the read timeout"))
			}
		}
		if _, err := io.ReadFull(c.nc, frame[read:end]); err != nil {
			return c.dropFrame(frame, true, mem, c.readError(err, c.timeoutReason(c.readTimeoutReason())))
		}
		read = end
	}
	return frame[:size], true, mem, ""
}

// growFrame moves the read bytes of frame into a pooled buffer of at least n bytes, reserving
// the new buffer (on top of the old one while both are live) before taking it; the old buffer
// goes back to the pool. It returns frame unchanged and false when reading must stop or the
// memory is not available within ReadTimeout.
func (c *conn) growFrame(frame []byte, read, n int, mem *reservation) ([]byte, bool) {
	old := int64(cap(frame))
	// Waiting at most ReadTimeout: frames growing on several connections could otherwise
	// hold the whole budget between them and wait on each other for good.
	timer := time.NewTimer(c.s.cfg.ReadTimeout)
	defer timer.Stop()
	if !mem.growTo(mem.held()+int64(bufpool.SizeFor(n)), c.readStop, timer.C) {
		return frame, false
	}
	grown := bufpool.Get(n)[:n]
	// A reused buffer may be larger than its class: memory the process holds already.
	mem.charge(int64(cap(grown)) - int64(bufpool.SizeFor(n)))
	copy(grown, frame[:read])
	if frame != nil {
		bufpool.Put(frame)
		mem.shrinkTo(mem.held() - old)
	}
	return grown, true
}

func (c *conn) dropFrame(frame []byte, pooled bool, mem *reservation, reason string) ([]byte, bool, *reservation, string) {
	mem.close()
	if pooled && frame != nil {
		bufpool.Put(frame)
	}
	return nil, false, nil, reason
}

// firstRequestDeadline is when a connection that has not sent a whole request yet is closed
// (FirstRequestTimeout), or the zero time.
func (c *conn) firstRequestDeadline() time.Time {
	if c.requests > 0 || c.s.cfg.FirstRequestTimeout <= 0 {
		return time.Time{}
	}
	return c.opened.Add(c.s.cfg.FirstRequestTimeout)
}

// idleReason and readTimeoutReason name a timeout while waiting for a frame or reading one.
func (c *conn) idleReason() string {
	if c.preAuthExpired() {
		return preAuthTimeoutReason
	}
	return "idle timeout"
}

func (c *conn) readTimeoutReason() string {
	if c.preAuthExpired() {
		return preAuthTimeoutReason
	}
	return "read timeout"
}

const preAuthTimeoutReason = "SASL authentication not completed within the read timeout"

func (c *conn) preAuthExpired() bool {
	return c.s.cfg.SASL && !c.authenticated() && !time.Now().Before(c.preAuthDeadline())
}

func (c *conn) timeoutReason(reason string) string {
	if c.requests == 0 && c.s.cfg.FirstRequestTimeout > 0 && !time.Now().Before(c.firstRequestDeadline()) {
		return "no request within the first request timeout"
	}
	return reason
}

// earliest is the earlier of a and b, ignoring a zero b.
func earliest(a, b time.Time) time.Time {
	if b.IsZero() || a.Before(b) {
		return a
	}
	return b
}

// decodeAlwaysAdmitted is the decode cost no request is refused for: under a budget smaller
// than that, such a request takes the whole budget and runs alone (Budget.clamp), so the
// process holds at most this much beyond the budget, and a tiny budget still serves ordinary
// requests (a Metadata or Fetch request of a few hundred bytes costs tens of KiB at worst).
const decodeAlwaysAdmitted = 64 << 10

// reserveDecoded grows the frame's reservation to the most decoding it can allocate
// (decodeCost) before it is decoded, waiting at most ReadTimeout: connections holding frames
// could otherwise wait on each other for good when the budget is full of them. A frame whose
// decoding could allocate more than one request may hold (beyond the frame) is refused (the
// connection closes)
// rather than decoded on a reservation that does not cover it: a 30 MB Produce of 10 million
// empty topic entries decodes into gigabytes (issue 25). On false it returns why reading
// stops.
func (c *conn) reserveDecoded(mem *reservation, frame []byte) (bool, string) {
	if mem == nil || mem.acct == nil || len(frame) < requestHeaderFixed {
		return true, ""
	}
	key, version := int16(binary.BigEndian.Uint16(frame)), int16(binary.BigEndian.Uint16(frame[2:]))
	cost := decodeCost(key, version, frame)
	// The frame itself was admitted by MAX_FRAME_SIZE and, when larger than one request may
	// hold, runs alone (Budget.clamp); what decoding adds must fit on its own.
	if limit := mem.limit(); cost > max(limit, decodeAlwaysAdmitted) {
		c.s.cfg.Observer.Refused(c.s.cfg.Name, RefusedRequestMemory)
		c.s.cfg.LogLimiter.Log(c.log, slog.LevelWarn, eventRequestRefused, "closing connection: request would decode into more memory than one request may hold",
			"reason", RefusedRequestMemory, "api", kmsg.NameForKey(key), "version", version, "frame_bytes", len(frame), "decode_bytes", cost, "limit", limit)
		return false, "request would decode into more than the request memory one request may hold (MAX_REQUEST_MEMORY, MAX_REQUEST_MEMORY_PER_ADDRESS)"
	}
	timer := time.NewTimer(c.s.cfg.ReadTimeout)
	defer timer.Stop()
	if !mem.growTo(int64(cap(frame))+cost, c.readStop, timer.C) {
		return false, c.stopReasonOr("request memory not available within the read timeout")
	}
	return true, ""
}

// stopReasonOr is stopReason when reading was told to stop, else reason.
func (c *conn) stopReasonOr(reason string) string {
	select {
	case <-c.readStop:
		return c.stopReason()
	default:
		return reason
	}
}

func (c *conn) stopReason() string {
	if c.evicted.Load() {
		return evictedReason
	}
	if c.draining() {
		return "shutdown"
	}
	return "closed by the response writer"
}

func (c *conn) readError(err error, timeoutReason string) string {
	if c.evicted.Load() {
		return evictedReason
	}
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
	if sl.r.h.AbandonedOnClose || sl.preAuth {
		ctx = c.waitCtx
	}
	if sl.started != nil {
		defer sl.markStarted() // before done, at the latest
	}
	ctx = context.WithValue(ctx, slotKey{}, sl)
	for _, g := range gates {
		select {
		case <-g:
		case <-ctx.Done():
			sl.err = ctx.Err()
			return
		}
	}
	defer func() {
		if pe := (*supervise.PanicError)(nil); errors.As(sl.err, &pe) {
			sl.resp = nil // the request fails; the connection closes (writeLoop)
			c.log.Error("handler panicked", "api", kmsg.NameForKey(sl.r.key), "version", sl.r.version, "panic", fmt.Sprint(pe.Value))
		}
	}()
	defer supervise.Recover(c.log, "listener_handler", &sl.err)
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
	var w responseWriter
	_, w.vectored = c.nc.(*net.TCPConn)
	for sl := range c.slots {
		c.writing = sl
		select {
		case <-sl.done:
		case <-c.ctx.Done():
			return
		}
		if sl.reject != "" {
			c.s.cfg.LogLimiter.Log(c.log, slog.LevelWarn, eventRequestRefused, "closing connection: request rejected",
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
			n, err := c.writeSafe(&w, sl)
			if err != nil {
				c.log.Info("response write failed", "err", err)
				c.finish(sl, 0, Failed)
				c.nc.Close()
				return
			}
			c.lastAnswer.Store(time.Now().UnixNano())
			outcome, written = Answered, n
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
				c.s.cfg.LogLimiter.Log(c.log, slog.LevelWarn, eventRequestRefused, "closing connection after handler error",
					"api", kmsg.NameForKey(sl.r.key), "version", sl.r.version, "err", sl.err)
			}
			c.nc.Close()
			return
		}
	}
}

// writeSafe is w.write, with a panic of the encoding (a Fetch answer's encoder runs here)
// recovered into an error: it closes this connection, not the process (internal/supervise).
func (c *conn) writeSafe(w *responseWriter, sl *slot) (n int, err error) {
	defer supervise.Recover(c.log, "listener_writer", &err)
	return w.write(c, sl)
}

// responseWriter encodes and writes a connection's responses, keeping its buffers between
// them.
type responseWriter struct {
	buf      []byte // encoded responses, or their heads when spliced
	splices  []Splice
	bufs     net.Buffers
	vectored bool // the connection writes net.Buffers with writev (TCP; TLS would copy anyway)
}

// write encodes sl's response and writes it, and returns the bytes written. The built
// response and its encoding are memory the request holds until written: both are charged to
// its reservation (spliced bytes are the response's own, already counted with it).
func (w *responseWriter) write(c *conn, sl *slot) (int, error) {
	resp, hint := unwrapResponse(sl.resp)
	sl.mem.charge(sizeOf(reflect.ValueOf(resp), true) - sl.reserved.Load())
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	if enc := spliced(sl.resp); enc != nil && w.vectored {
		flexible := resp.IsFlexible() && resp.Key() != apiVersionsKey
		head, splices, bufs, size := appendSplicedResponse(w.buf[:0], w.splices[:0], w.bufs[:0], sl.r.corrID, flexible, enc)
		sl.mem.charge(int64(len(head)))
		pending := bufs // WriteTo consumes what it is called on
		_, err := pending.WriteTo(c.nc)
		clear(splices) // the spliced memory goes back to the handler with Release
		clear(bufs)
		w.buf, w.splices, w.bufs = keepWriteBuffer(w.buf, head), splices[:0], bufs[:0]
		return size, err
	}
	out := appendResponse(writeBuffer(w.buf, hint), sl.r.corrID, resp)
	sl.mem.charge(int64(len(out)))
	_, err := c.nc.Write(out)
	w.buf = keepWriteBuffer(w.buf, out)
	return len(out), err
}

type slotKey struct{}

// TakeFrame hands the pooled buffer the request of ctx was read into (a FrameReusable
// handler's) to the caller, who then owns it: the listener neither reuses it nor counts it
// against the request memory once the request is finished, so the caller must account for
// it (the tail cache counts it against its own budget) and give it back to bufpool when it
// is done. The request's decoded byte fields are slices of it. Nil when the frame was not
// pooled, the handler is not FrameReusable, or it was taken already.
func TakeFrame(ctx context.Context) []byte {
	sl, ok := ctx.Value(slotKey{}).(*slot)
	if !ok {
		return nil
	}
	sl.frameMu.Lock()
	defer sl.frameMu.Unlock()
	f := sl.frame
	sl.frame = nil
	return f
}

// Started tells the listener that a pipelined handler (Handler.Pipelined) serving the request
// of ctx has done everything that must happen in request order: the next pipelined request
// of the connection may start. Calling it again, or from other handlers, does nothing.
func Started(ctx context.Context) {
	if sl, ok := ctx.Value(slotKey{}).(*slot); ok && sl.started != nil {
		sl.markStarted()
	}
}
