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
	addr  string
	state *state
	log   *slog.Logger

	// cluster is the cluster this server is node index of (cluster.go); nil for a single
	// server.
	cluster *Cluster
	index   int

	mu     sync.Mutex
	ln     net.Listener
	conns  map[*conn]struct{}
	closed bool
	// down: the node was killed (Cluster.Kill): its listener is closed until Cluster.Restart.
	down bool
	// crashing refuses new connections while Crash waits for the open ones to end;
	// connsCond (on mu) is signalled whenever a connection ends.
	crashing  bool
	connsCond *sync.Cond
	wg        sync.WaitGroup
	stop      chan struct{}
}

// Start listens on cfg.Addr and serves until Close.
func Start(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return start(cfg, newState(cfg.Clock, cfg.RootUsername, cfg.RootPassword), nil, 0)
}

// withDefaults validates cfg and fills in its defaults.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.RootUsername == "" {
		cfg.RootUsername = "iggy"
	}
	if cfg.RootPassword == "" {
		cfg.RootPassword = "iggy"
	}
	if !validUsername(cfg.RootUsername) || !validPassword(cfg.RootPassword) {
		return cfg, errors.New("memserver: root username must be 3..50 bytes and password 3..100 bytes")
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return cfg, nil
}

// start serves st on cfg.Addr, as node index of cl when cl is set.
func start(cfg Config, st *state, cl *Cluster, index int) (*Server, error) {
	log, startLog := cfg.Logger, cfg.Logger
	if log == nil {
		log, startLog = slog.New(slog.NewTextHandler(io.Discard, nil)), slog.Default()
	}
	ln, err := listen(cfg.Addr, cfg.TLS)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:     cfg,
		ln:      ln,
		addr:    ln.Addr().String(),
		state:   st,
		log:     log,
		cluster: cl,
		index:   index,
		conns:   map[*conn]struct{}{},
		stop:    make(chan struct{}),
	}
	s.connsCond = sync.NewCond(&s.mu)
	if cl != nil {
		s.log = log.With("node", index)
	}
	startLog.Info("in-memory Iggy server listening (NOT durable: all data is lost on exit)",
		"addr", ln.Addr().String(), "protocol", "0.11.0", "tls", cfg.TLS != nil, "cluster_node", index, "cluster", cl != nil)
	s.wg.Add(1)
	go s.acceptLoop(ln)
	if cfg.HeartbeatInterval > 0 {
		s.wg.Add(1)
		go s.heartbeatLoop()
	}
	return s, nil
}

func listen(addr string, tc *tls.Config) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc != nil {
		ln = tls.NewListener(ln, tc)
	}
	return ln, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.addr }

// kill closes the listener and every connection, as the death of the process looks to clients;
// the state stays (the other nodes of a cluster share it). It reports whether the server was up.
func (s *Server) kill() bool {
	s.mu.Lock()
	if s.closed || s.down {
		s.mu.Unlock()
		return false
	}
	s.down = true
	ln := s.ln
	s.mu.Unlock()
	_ = ln.Close()
	s.DropConnections()
	return true
}

// restart listens again on the address a kill closed.
func (s *Server) restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.down {
		return nil
	}
	ln, err := listen(s.addr, s.cfg.TLS)
	if err != nil {
		return err
	}
	s.ln, s.down = ln, false
	s.wg.Add(1)
	go s.acceptLoop(ln)
	return nil
}

// Close stops listening, drops every connection and waits for their goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	ln, down := s.ln, s.down
	s.mu.Unlock()
	var err error
	if !down {
		err = ln.Close()
	}
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

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.wg.Done()
	for {
		nc, err := ln.Accept()
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
		if s.crashing || s.down {
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
