package listener

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/loglimit"
)

// Config configures a Server.
type Config struct {
	Name         string // listener name, reported to handlers and in logs
	Dispatcher   Dispatcher
	Logger       *slog.Logger
	MaxFrameSize int // largest accepted frame body, bytes
	// MaxConnections bounds open connections; more are closed on accept.
	MaxConnections int
	// MaxConnectionsPerAddress bounds the open connections of one peer IP address; more are
	// closed on accept (0: no bound).
	MaxConnectionsPerAddress int
	// FirstRequestTimeout bounds the time from accept to the end of the first request's
	// frame; a connection that has not sent one by then is closed (0: only IdleTimeout).
	FirstRequestTimeout time.Duration
	// MaxInFlight bounds the requests read ahead and not yet answered, per connection.
	MaxInFlight int
	// IdleTimeout bounds the wait for the next request; ReadTimeout the rest of a frame once
	// its length arrived; WriteTimeout the write of one response.
	IdleTimeout, ReadTimeout, WriteTimeout time.Duration
	// Budget, when set, bounds the request memory in use (frames, decoded requests, what
	// handlers reserve, encoded responses); share one Budget between the listeners of a
	// process to bound the process.
	Budget *Budget
	// Observer, when set, receives events for metrics.
	Observer Observer

	// TLS, when set, makes this a TLS listener (SSL, SASL_SSL): every connection completes a
	// handshake, within ReadTimeout, before its first request is read.
	TLS *tls.Config
	// ClientIdentity, when set, runs after the TLS handshake to establish the connection's
	// identity from its client certificate (cc.SetIdentity); an error closes the connection.
	ClientIdentity func(ctx context.Context, cc *ConnContext, state tls.ConnectionState) error
	// SASL listeners serve nothing but ApiVersions (at most twice), one SaslHandshake and one
	// SaslAuthenticate until the connection has an identity, one request at a time, in frames
	// of at most PreAuthMaxFrameSize bytes, and close it when it has none ReadTimeout after it
	// opened. An identity whose Expires has passed allows only re-authentication (KIP-368),
	// within ReadTimeout of the expiry. Anything else closes the connection.
	SASL                bool
	PreAuthMaxFrameSize int
	// SessionCheck, when set, re-verifies a connection's (non-anonymous) identity before a
	// request when it was last verified SessionCheckInterval ago or more (and before the first
	// request after it was established): an error closes the connection without answering.
	// It bounds how long a deleted, deactivated or replaced user keeps an open connection.
	SessionCheck         func(ctx context.Context, id Identity) error
	SessionCheckInterval time.Duration
	// LogLimiter, when set, rate-limits the log lines of connection events and refusals.
	LogLimiter *loglimit.Limiter
}

// Server is one Kafka listener.
type Server struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	ln       net.Listener
	conns    map[*conn]struct{}
	closing  bool
	connsWG  sync.WaitGroup
	nextID   atomic.Uint64
	openConn atomic.Int64
	perAddr  map[string]int // open connections by peer address (MaxConnectionsPerAddress)
}

// New returns a Server; call Serve to start it.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	return &Server{cfg: cfg, log: cfg.Logger.With("listener", cfg.Name), conns: make(map[*conn]struct{})}
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("listener: server closed")

// Serve accepts connections on ln until Shutdown. It always returns a non-nil error.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.ln = ln
	s.mu.Unlock()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) {
				// Out of file descriptors and similar: wait instead of spinning.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed, retrying", "err", err, "backoff", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		if n := s.openConn.Add(1); int(n) > s.cfg.MaxConnections && !s.evictIdle() {
			s.openConn.Add(-1)
			s.cfg.LogLimiter.Log(s.log, slog.LevelWarn, eventConnRefused, "connection refused: too many connections",
				"reason", RefusedTooManyConnections, "remote", nc.RemoteAddr().String(), "max", s.cfg.MaxConnections)
			s.cfg.Observer.ConnRefused(s.cfg.Name)
			s.cfg.Observer.Refused(s.cfg.Name, RefusedTooManyConnections)
			nc.Close()
			continue
		}
		host := peerHost(nc.RemoteAddr())
		if !s.admitAddress(host) {
			s.openConn.Add(-1)
			s.log.Warn("connection refused: too many connections from this address", "remote", nc.RemoteAddr().String(), "max", s.cfg.MaxConnectionsPerAddress)
			s.cfg.Observer.ConnRefused(s.cfg.Name)
			nc.Close()
			continue
		}
		c := s.newConn(nc)
		if !s.track(c) {
			s.leaveAddress(host)
			s.openConn.Add(-1)
			nc.Close()
			return ErrServerClosed
		}
		go func() {
			defer s.connsWG.Done()
			defer s.openConn.Add(-1)
			defer s.leaveAddress(host)
			defer s.untrack(c)
			c.serve()
		}()
	}
}

// admitAddress counts a new connection from host, or reports false when host already has
// MaxConnectionsPerAddress of them.
func (s *Server) admitAddress(host string) bool {
	if s.cfg.MaxConnectionsPerAddress <= 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perAddr[host] >= s.cfg.MaxConnectionsPerAddress {
		return false
	}
	if s.perAddr == nil {
		s.perAddr = map[string]int{}
	}
	s.perAddr[host]++
	return true
}

func (s *Server) leaveAddress(host string) {
	if s.cfg.MaxConnectionsPerAddress <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perAddr[host]--; s.perAddr[host] <= 0 {
		delete(s.perAddr, host)
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

func (s *Server) track(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	s.connsWG.Add(1)
	return true
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Addr returns the listening address, or nil before Serve.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Shutdown stops accepting, stops reading new requests, lets in-flight requests finish and
// their responses go out, and closes the connections. When ctx ends first, the remaining
// connections are closed at once and their handlers' contexts cancelled; Shutdown then
// returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.drain()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() { s.connsWG.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.abort()
		}
		s.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

// OpenConnections is the number of connections being served.
func (s *Server) OpenConnections() int { return int(s.openConn.Load()) }
