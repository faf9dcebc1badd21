package memserver

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Config configures an in-memory server.
type Config struct {
	// Addr is the TCP address to listen on, e.g. "127.0.0.1:0" for a free port.
	Addr string
	// RootUsername and RootPassword are the credentials of the root user (id 0); both default
	// to "iggy".
	RootUsername, RootPassword string
	// Logger receives connection and failure logs; nil discards them (the start line, which
	// says the server is not durable, then goes to slog.Default()).
	Logger *slog.Logger
	// HeartbeatInterval, when set, evicts with StaleClient a session that is a member of a
	// consumer group and has sent nothing for 1.2 × the interval, as the real server's
	// heartbeat verifier does. Zero disables it.
	HeartbeatInterval time.Duration
	// Clock returns the current time; nil means time.Now. Tests use it to control the
	// timestamps the server stamps on messages.
	Clock func() time.Time
	// TLS, when set, serves TCP over TLS with this configuration, as a real Iggy server with
	// tcp.tls enabled does.
	TLS *tls.Config
}

// Server is a running in-memory Iggy server. Its state is lost when it stops.
type Server struct {
	cfg   Config
	ln    net.Listener
	addr  string
	state *state
	log   *slog.Logger

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	// crashing refuses new connections while Crash waits for the open ones to end;
	// connsCond (on mu) is signalled whenever a connection ends.
	crashing  bool
	connsCond *sync.Cond
	wg        sync.WaitGroup
	stop      chan struct{}
}

// Start listens on cfg.Addr and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.RootUsername == "" {
		cfg.RootUsername = "iggy"
	}
	if cfg.RootPassword == "" {
		cfg.RootPassword = "iggy"
	}
	if !validUsername(cfg.RootUsername) || !validPassword(cfg.RootPassword) {
		return nil, errors.New("memserver: root username must be 3..50 bytes and password 3..100 bytes")
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	log, startLog := cfg.Logger, cfg.Logger
	if log == nil {
		log, startLog = slog.New(slog.NewTextHandler(io.Discard, nil)), slog.Default()
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	if cfg.TLS != nil {
		ln = tls.NewListener(ln, cfg.TLS)
	}
	s := &Server{
		cfg:   cfg,
		ln:    ln,
		addr:  ln.Addr().String(),
		state: newState(cfg.Clock, cfg.RootUsername, cfg.RootPassword),
		log:   log,
		conns: map[*conn]struct{}{},
		stop:  make(chan struct{}),
	}
	s.connsCond = sync.NewCond(&s.mu)
	startLog.Info("in-memory Iggy server listening (NOT durable: all data is lost on exit)",
		"addr", ln.Addr().String(), "protocol", "0.11.0", "tls", cfg.TLS != nil)
	s.wg.Add(1)
	go s.acceptLoop()
	if cfg.HeartbeatInterval > 0 {
		s.wg.Add(1)
		go s.heartbeatLoop()
	}
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.addr }

// Close stops listening, drops every connection and waits for their goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	s.mu.Unlock()
	err := s.ln.Close()
	s.DropConnections()
	s.wg.Wait()
	return err
}

// DropConnections closes every client connection, as a server crash would from the clients'
// point of view (the data stays). Their sessions end and release their group memberships.
func (s *Server) DropConnections() {
	for _, c := range s.openConns() {
		c.nc.Close()
	}
}

// openConns returns the connections open now, to act on without holding s.mu.
func (s *Server) openConns() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	return conns
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		if tcp, ok := nc.(*net.TCPConn); ok {
			_ = tcp.SetNoDelay(true)
		}
		c := newConn(s, nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		if s.crashing {
			s.mu.Unlock()
			nc.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.connsCond.Broadcast()
			s.mu.Unlock()
		}()
	}
}

// heartbeatLoop evicts group members that went silent (see Config.HeartbeatInterval).
func (s *Server) heartbeatLoop() {
	defer s.wg.Done()
	interval := s.cfg.HeartbeatInterval
	limit := interval + interval/5
	t := time.NewTicker(max(interval/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		for _, c := range s.openConns() {
			if c.idleFor() > limit && c.inAnyGroup() {
				c.evictStale()
			}
		}
	}
}
