package iggy

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// Retry pacing, as Iggy's own SDKs pace it for protocol 0.11.0: TransientNotCommitted is resent
// every 50 ms until the deadline, and a lost session is re-established a few times before the
// call gives up. TransientNotAccepted is retried while the router checks the roster, for up to
// Config.FailoverTimeout (the SDK retries it for 2 s, then rechecks the leader).
const (
	transientInterval  = 50 * time.Millisecond
	maxBackoff         = time.Second
	maxSessionAttempts = 4
)

// Conn is one logged-in Iggy connection. Iggy allows one request in flight per connection, so
// a Conn serialises its calls. It reconnects (new client id, new login) after an eviction or
// an I/O error, replaying the failed request only when that is safe (see exchange). It pings
// the server every Config.PingInterval, which keeps consumer-group membership alive. Conn
// implements API.
type Conn struct {
	commands
	cfg    *Config
	router *router // which node to dial; shared by a Client's connections
	owns   bool    // the router is this connection's own (DialConn), closed with it
	side   bool    // a router's connection to a node that is not the roster's leader (partitionExchange)

	sem chan struct{} // one token: held for a whole exchange

	// Guarded by sem.
	nc      net.Conn
	addr    string // the node nc is connected to
	gen     uint64 // the router's generation when nc connected
	br      *bufio.Reader
	client  [16]byte
	session uint64
	counter uint64
	userID  uint32
	wbuf    []byte
	rbuf    []byte
	hdr     [wire.HeaderSize]byte
	closed  bool
	logins  uint64 // successful logins; more than one means a reconnect
	// interrupted receives once a cancellation's interrupt of a round trip has moved the
	// socket's deadline into the past, so the round trip can wait for it to finish instead of
	// giving up a connection that has nothing in flight.
	interrupted chan struct{}

	stopPing  context.CancelFunc // ends the ping loop and any ping it is running
	pingDone  chan struct{}
	closeOnce sync.Once
}

var _ API = (*Conn)(nil)

// DialConn opens one connection and logs in. Bad credentials come back as an *Error (42
// InvalidCredentials, 53 InvalidPersonalAccessToken, ...); network failures match
// ErrConnection.
func DialConn(ctx context.Context, cfg Config) (*Conn, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	r := newRouter(c, routeLeader)
	cn, err := dialConn(ctx, c, r)
	if err != nil {
		r.close()
		return nil, err
	}
	cn.owns = true
	return cn, nil
}

// dialConn opens a connection to the node r picks and logs in.
func dialConn(ctx context.Context, cfg *Config, r *router) (*Conn, error) {
	cn := &Conn{cfg: cfg, router: r, sem: make(chan struct{}, 1), interrupted: make(chan struct{}, 1)}
	cn.commands = commands{x: cn}
	cn.sem <- struct{}{}
	err := cn.connect(ctx)
	<-cn.sem
	if err != nil {
		return nil, err
	}
	if cfg.PingInterval > 0 {
		var pingCtx context.Context
		pingCtx, cn.stopPing = context.WithCancel(context.Background())
		cn.pingDone = make(chan struct{})
		go cn.pingLoop(pingCtx)
	}
	return cn, nil
}

// lock takes the connection for one exchange, giving up when ctx ends.
func (cn *Conn) lock(ctx context.Context) error {
	select {
	case cn.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (cn *Conn) unlock() { <-cn.sem }

// Session returns the current session number. It changes when the connection re-logs in, which
// drops the consumer-group memberships of the old session.
func (cn *Conn) Session() uint64 {
	if cn.lock(context.Background()) != nil {
		return 0
	}
	defer cn.unlock()
	return cn.session
}

// UserID returns the id of the logged-in user.
func (cn *Conn) UserID() uint32 {
	if cn.lock(context.Background()) != nil {
		return 0
	}
	defer cn.unlock()
	return cn.userID
}

// Close logs out (best effort, bounded by one second) and closes the connection.
func (cn *Conn) Close() error {
	cn.closeOnce.Do(func() {
		if cn.stopPing != nil {
			cn.stopPing()
			<-cn.pingDone
		}
		cn.sem <- struct{}{}
		defer cn.unlock()
		if cn.nc != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, _, _ = cn.roundTrip(ctx, "logout", wire.OpLogout, wire.CodeLogoutUser, cn.counter, nil, nil)
			cancel()
			cn.drop()
		}
		cn.closed = true
		if cn.owns {
			cn.router.close()
		}
	})
	return nil
}

// abandon closes a connection that never pinged, without logging out: the server ends the
// session when the socket closes. Probes use it, so that a dying node cannot hold them up.
func (cn *Conn) abandon() {
	cn.sem <- struct{}{}
	defer cn.unlock()
	cn.drop()
	cn.closed = true
	if cn.owns {
		cn.router.close()
	}
}

// Addr returns the node the connection is connected to (empty while it is not).
func (cn *Conn) Addr() string {
	if cn.lock(context.Background()) != nil {
		return ""
	}
	defer cn.unlock()
	if cn.nc == nil {
		return ""
	}
	return cn.addr
}

func (cn *Conn) pingLoop(stop context.Context) {
	defer close(cn.pingDone)
	t := time.NewTicker(cn.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-stop.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(stop, max(cn.cfg.PingInterval, DefaultPingInterval))
			_ = cn.Ping(ctx) // a failure drops the connection; the next call or ping reconnects
			cancel()
		}
	}
}

// exchange runs one command on this connection.
func (cn *Conn) exchange(ctx context.Context, c *call, decode func([]byte) error) (err error) {
	defer observe(cn.cfg.Observer, c.code, time.Now(), &err)
	if err := cn.lock(ctx); err != nil {
		return &ConnError{Op: commandName(c.code), Err: err}
	}
	defer cn.unlock()
	return cn.exchangeLocked(ctx, c, decode)
}

// observe reports a command that started at start and ended with *err.
func observe(o Observer, code uint32, start time.Time, err *error) {
	o.CommandDone(commandName(code), time.Since(start), OutcomeOf(*err))
}

// exchangeLocked sends c and decodes the reply payload with decode (which must not retain it
// unless c.keep is set). On a lost connection or session it reconnects and replays c when
// that cannot apply it twice: when it was not sent, when the server refused it without
// executing it (eviction, Unauthenticated), or when it is idempotent or deduplicated (reads,
// metadata operations, consumer-offset stores). Otherwise it returns a *ConnError with Sent
// set. It follows the router: a connection to a node that is no longer the primary is
// dropped before the next send, and a TransientNotAccepted (the request was not admitted,
// so it may go anywhere) has the router check the roster and is sent again, to the new
// primary if there is one, for up to Config.FailoverTimeout.
func (cn *Conn) exchangeLocked(ctx context.Context, c *call, decode func([]byte) error) error {
	name := commandName(c.code)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cn.cfg.RequestTimeout)
		defer cancel()
	}
	op := wire.OperationForCode(c.code)
	var notAcceptedSince time.Time
	for attempt := 1; ; attempt++ {
		if cn.closed {
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return &ConnError{Op: name, Err: err}
		}
		if cn.nc != nil && cn.router.moved(cn.gen) {
			cn.drop() // nothing is in flight: the request goes to the new primary
		}
		if cn.nc == nil {
			if err := cn.connect(ctx); err != nil {
				var se *Error
				// A search for the primary that failed has used the whole failover budget.
				if errors.As(err, &se) || errors.Is(err, errNoPrimary) || ctx.Err() != nil || attempt >= maxSessionAttempts {
					return err
				}
				if sleep(ctx, backoff(attempt)) != nil {
					return err
				}
				continue
			}
		}
		if attempt == 1 && !replayable(op, c.code) && peerClosed(cn.nc) {
			cn.drop() // the server is gone: a send written now could only be "maybe applied"
			continue
		}
		reqNo := cn.counter
		if wire.AdvancesRequest(op) {
			cn.counter++
		}
		payload, sent, err := cn.roundTrip(ctx, name, op, c.code, reqNo, c.body, c.tail)
		if err == nil {
			if c.keep {
				// The caller's result aliases the reply buffer: it is the caller's now.
				c.kept, cn.rbuf = cn.rbuf, nil
			}
			if decode == nil {
				return nil
			}
			if derr := decode(payload); derr != nil {
				return fmt.Errorf("iggy %s: malformed reply: %w", name, derr)
			}
			return nil
		}
		var se *Error
		if errors.As(err, &se) && !errors.Is(err, errSessionLost) {
			if se.Code != CodeTransientNotAccepted {
				return se
			}
			// Not admitted: a backup's answer, or a primary's that cannot take it now.
			if notAcceptedSince.IsZero() {
				notAcceptedSince = time.Now()
			} else if time.Since(notAcceptedSince) > cn.cfg.FailoverTimeout {
				return se
			}
			if cn.side {
				return se // the router tries the next node
			}
			cn.router.notAccepted(ctx, cn.addr, cn.gen)
			if wire.IsPartitionOp(op) && !cn.router.moved(cn.gen) {
				// The roster's leader is not this partition's primary: another node may be.
				if err, ok := cn.router.partitionExchange(ctx, cn.addr, c, decode); ok {
					return err
				}
			}
			if sleep(ctx, transientInterval) != nil {
				return se
			}
			attempt-- // not a session failure: it does not count against maxSessionAttempts
			continue
		}
		cn.drop()
		if fse := (*wire.FrameSizeError)(nil); errors.As(err, &fse) {
			// The same request would get the same answer: the caller must ask for less.
			return &ConnError{Op: name, Err: fmt.Errorf("%w: %w", ErrReplyTooLarge, err), Sent: sent}
		}
		applied := sent && !errors.Is(err, errSessionLost)
		if ctx.Err() != nil {
			err = errors.Join(ctx.Err(), err)
		}
		if (applied && !replayable(op, c.code)) || ctx.Err() != nil || attempt >= maxSessionAttempts {
			return &ConnError{Op: name, Err: err, Sent: applied}
		}
		if attempt > 1 && sleep(ctx, backoff(attempt)) != nil {
			return &ConnError{Op: name, Err: errors.Join(ctx.Err(), err), Sent: applied}
		}
	}
}

// replayable reports whether a request that may have been applied can be sent again after a
// reconnect: reads and pings change nothing, metadata operations fail cleanly if they already
// happened (e.g. "already exists"), and storing the same consumer offset twice is harmless.
// A SendMessages replay could append the messages twice.
func replayable(op uint8, code uint32) bool {
	return op == wire.OpNonReplicated || wire.IsMetadataOp(op) || code == wire.CodeStoreConsumerOffset
}

func backoff(attempt int) time.Duration {
	return min(transientInterval<<attempt, maxBackoff)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// unknownOutcomeError is a TransientNotAccepted (58) answering the resend of a request whose
// first answer was TransientNotCommitted (57): the request may have been committed under the
// old view, so it counts as sent and maybe applied, never as "not admitted". It does not
// unwrap to the *Error on purpose.
type unknownOutcomeError struct{ cause *Error }

func (e *unknownOutcomeError) Error() string {
	return "outcome unknown: not committed, then " + e.cause.Error()
}

// errSessionLost marks failures after which the server holds no session for this connection
// and did not execute the request: evictions, Unauthenticated, and the empty SendMessages
// reply of a dead session.
var errSessionLost = errors.New("iggy: session lost")

type sessionLostError struct{ cause *Error }

func (e *sessionLostError) Error() string   { return "session lost: " + e.cause.Error() }
func (e *sessionLostError) Unwrap() []error { return []error{errSessionLost, e.cause} }

// connect connects to the node the router picks. When that node refuses the connection or the
// login for a reason a retry may fix, the router picks again (in a cluster: finds the primary
// again), for up to Config.FailoverTimeout.
func (cn *Conn) connect(ctx context.Context) error {
	start := time.Now()
	for tries := 1; ; tries++ {
		addr, gen, err := cn.router.target(ctx)
		if err != nil {
			return err
		}
		err = cn.connectTo(ctx, addr)
		if err == nil {
			cn.addr, cn.gen = addr, gen
			if cn.logins > 1 && cn.cfg.OnReconnect != nil {
				cn.cfg.OnReconnect()
			}
			return nil
		}
		var se *Error
		if (errors.As(err, &se) && isCredentialCode(se.Code)) || ctx.Err() != nil || time.Since(start) > cn.cfg.FailoverTimeout {
			return err
		}
		if IsCode(err, CodeTransientNotAccepted) && cn.router.soleServer() {
			// A server of its own did not admit the login now: ask it again.
			if sleep(ctx, transientInterval) != nil {
				return err
			}
			continue
		}
		if !cn.router.failed(addr, gen, tries) {
			return err
		}
		if tries > 1 && sleep(ctx, rosterPoll) != nil {
			return err
		}
	}
}

// connectTo dials addr, optionally wraps the socket in TLS, and logs in with a fresh client id.
func (cn *Conn) connectTo(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, cn.cfg.DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return &ConnError{Op: "dial", Err: err}
	}
	if cn.cfg.TLS != nil {
		tc := tls.Client(nc, cn.cfg.tlsFor(addr))
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return &ConnError{Op: "tls handshake", Err: err}
		}
		nc = tc
	}
	cn.nc = nc
	if cn.br == nil {
		cn.br = bufio.NewReaderSize(nc, 64<<10)
	} else {
		cn.br.Reset(nc)
	}
	for {
		if _, err := rand.Read(cn.client[:]); err != nil {
			cn.drop()
			return &ConnError{Op: "login", Err: err}
		}
		if cn.client != ([16]byte{}) {
			break
		}
	}
	cn.session, cn.counter = 0, 0
	body := cn.cfg.loginBody(nil)
	payload, _, err := cn.roundTrip(ctx, "login", wire.OpRegister, wire.CodeLoginRegister, 0, body, nil)
	if err != nil {
		cn.drop()
		var se *Error
		if errors.As(err, &se) && isCredentialCode(se.Code) {
			rejected := &Error{Code: se.Code, Op: "login"}
			cn.cfg.Observer.LoginRejected(rejected)
			return rejected
		}
		return &ConnError{Op: "login", Err: err}
	}
	l, err := wire.DecodeLoginReply(payload)
	if err != nil {
		cn.drop()
		return &ConnError{Op: "login", Err: fmt.Errorf("malformed login reply: %w", err)}
	}
	cn.session, cn.counter, cn.userID = l.Session, 1, l.UserID
	cn.logins++
	return nil
}

// isCredentialCode reports login failures that no retry can fix.
func isCredentialCode(code uint32) bool {
	switch code {
	case CodeInvalidCredentials, CodeInvalidUsername, CodeInvalidPassword, CodeUserInactive,
		CodeInvalidPersonalAccessToken, CodePersonalAccessTokenExpired, CodeIncompatibleProtocolVersion,
		CodeInvalidFormat, CodeUnauthorized:
		return true
	}
	return false
}

// drop closes the socket; the next exchange reconnects.
func (cn *Conn) drop() {
	if cn.nc != nil {
		cn.nc.Close()
		cn.nc = nil
	}
	cn.session = 0
}

// roundTrip writes one request frame and reads its reply, resending the identical frame on
// TransientNotCommitted (outcome unknown: only the same request number on the same session is
// safe); a TransientNotAccepted is returned, for exchangeLocked to decide where to send it
// again. It returns the reply payload (after the
// result section for result-framed replies), which aliases cn.rbuf, and whether the request
// was written (a write that failed before its first byte sent nothing). Errors: *Error for a
// server rejection, a sessionLostError, or an I/O or protocol error after which the
// connection must be dropped.
func (cn *Conn) roundTrip(ctx context.Context, name string, op uint8, code uint32, reqNo uint64, body, tail []byte) (payload []byte, sent bool, err error) {
	nc := cn.nc
	d, _ := ctx.Deadline() // zero (none) clears a deadline an earlier exchange left
	_ = nc.SetDeadline(d)
	// Cancelling ctx interrupts the I/O by moving the deadline into the past. stop does not
	// wait for an interrupt that has already started, so the round trip waits for it: it must
	// not land during the next exchange. An interrupt after the reply was read leaves nothing
	// in flight, and the next round trip's SetDeadline undoes it, so the connection stays.
	stop := context.AfterFunc(ctx, func() {
		_ = nc.SetDeadline(time.Unix(1, 0))
		cn.interrupted <- struct{}{}
	})
	defer func() {
		if !stop() {
			<-cn.interrupted
		}
	}()

	session := cn.session
	if op == wire.OpRegister {
		session = 0
	}
	frame := append(cn.wbuf[:0], make([]byte, wire.HeaderSize)...)
	frame = append(frame, body...)
	wire.PutRequestHeader(frame, &wire.RequestHeader{
		Size:      uint32(len(frame) + len(tail)),
		Client:    cn.client,
		Request:   reqNo,
		Operation: op,
		Session:   session,
		Code:      code,
	})
	cn.wbuf = frame

	notCommitted := false // a TransientNotCommitted left this request's outcome unknown
	for {
		var n int64
		if tail == nil {
			var w int
			w, err = nc.Write(frame)
			n = int64(w)
		} else {
			bufs := net.Buffers{frame, tail}
			n, err = bufs.WriteTo(nc)
		}
		sent = sent || n > 0 // a resend follows a send that went out
		if err != nil {
			return nil, sent, err
		}
		payload, err = cn.readReply(name, op, reqNo)
		var se *Error
		if err == nil || !errors.As(err, &se) || errors.Is(err, errSessionLost) {
			return payload, sent, err
		}
		if se.Code == CodeTransientNotAccepted && notCommitted {
			// The node no longer takes the request (a view change), but the first send may
			// have been committed before it: that is no "not admitted anywhere".
			return nil, sent, &unknownOutcomeError{cause: se}
		}
		if se.Code != CodeTransientNotCommitted {
			return nil, sent, se
		}
		// Outcome unknown: the same frame (same request number) asks again.
		notCommitted = true
		if serr := sleep(ctx, transientInterval); serr != nil {
			return nil, sent, se
		}
	}
}

// readReply reads the frame answering request reqNo and applies Iggy's reply rules (status
// codes, result framing, transient retries: see the constants above).
func (cn *Conn) readReply(name string, op uint8, reqNo uint64) ([]byte, error) {
	body, err := wire.ReadFrame(cn.br, &cn.hdr, cn.rbuf)
	if err != nil {
		return nil, err
	}
	if cap(body) > cap(cn.rbuf) {
		cn.rbuf = body[:0]
	}
	switch cn.hdr[60] {
	case wire.CommandEviction:
		ev, err := wire.DecodeEvictionHeader(cn.hdr[:])
		if err != nil {
			return nil, err
		}
		return nil, &sessionLostError{cause: &Error{Code: wire.EvictionCode(ev.Reason), Op: name}}
	case wire.CommandReply:
	default:
		return nil, fmt.Errorf("iggy %s: unexpected frame command %d", name, cn.hdr[60])
	}
	rh, err := wire.DecodeReplyHeader(cn.hdr[:])
	if err != nil {
		return nil, err
	}
	// Only the request number correlates: the server may answer under the internal
	// operation it rewrote the request to (CreateTopic 132 comes back as 64,
	// CreateTopicWithAssignments).
	if rh.Request != reqNo {
		return nil, fmt.Errorf("iggy %s: reply to request %d, want %d", name, rh.Request, reqNo)
	}
	if rh.Status != 0 {
		e := &Error{Code: rh.Status, Op: name}
		if rh.Status == CodeUnauthenticated && op != wire.OpRegister {
			return nil, &sessionLostError{cause: e}
		}
		return nil, e
	}
	if wire.IsResultFramed(op) || op == wire.OpRegister {
		payload, code, err := wire.ParseResult(body)
		if err != nil {
			return nil, fmt.Errorf("iggy %s: %w", name, err)
		}
		if code != 0 {
			return nil, &Error{Code: code, Op: name}
		}
		return payload, nil
	}
	if op == wire.OpSendMessages && len(body) == 0 {
		return nil, &sessionLostError{cause: &Error{Code: CodeUnauthenticated, Op: name}}
	}
	return body, nil
}
