package iggy

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Client is a pool of logged-in connections. Each call runs on an idle connection; when none
// is idle it waits for the first one that any other call gives back. Client implements API.
type Client struct {
	commands
	cfg    *Config
	router *router // the primary every connection follows (router.go)
	conns  []*Conn
	idle   chan *Conn // the connections no call holds; a call takes one and gives it back

	waiting atomic.Int64 // calls waiting for a connection

	mu       sync.Mutex
	acquired map[*Conn]struct{}
	closed   bool

	stopRoster context.CancelFunc
	rosterDone chan struct{}
}

var _ API = (*Client)(nil)

// Dial finds the primary among cfg.Addr's nodes, opens cfg.PoolSize connections to it and logs
// each in. It fails if any of them cannot.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	cl := &Client{cfg: c, router: newRouter(c, routeLeader), acquired: map[*Conn]struct{}{}, idle: make(chan *Conn, c.PoolSize)}
	cl.commands = commands{x: cl}
	for range c.PoolSize {
		cn, err := dialConn(ctx, c, cl.router)
		if err != nil {
			cl.Close()
			return nil, err
		}
		cl.conns = append(cl.conns, cn)
		cl.idle <- cn
	}
	if c.RosterInterval > 0 {
		cl.readRoster(ctx)
		var rctx context.Context
		rctx, cl.stopRoster = context.WithCancel(context.Background())
		cl.rosterDone = make(chan struct{})
		go cl.rosterLoop(rctx)
	}
	return cl, nil
}

// rosterLoop reads the roster on the pool every RosterInterval, so that a primary that moved
// without failing a request of this client (a view change while the old primary lives on)
// is followed, and the node list stays current.
func (cl *Client) rosterLoop(stop context.Context) {
	defer close(cl.rosterDone)
	t := time.NewTicker(cl.cfg.RosterInterval)
	defer t.Stop()
	for {
		select {
		case <-stop.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(stop, cl.cfg.RosterInterval)
		cl.readRoster(ctx)
		cancel()
	}
}

// readRoster reads the roster on the pool and hands it to the router. A failure changes
// nothing: the requests that fail say what happened, and the router acts on them.
func (cl *Client) readRoster(ctx context.Context) {
	if md, err := cl.GetClusterMetadata(ctx); err == nil {
		cl.router.observeRoster(md)
	}
}

// Primary returns the Iggy node the client sends its requests to: the cluster's primary, or
// the one server. It is empty while the client is looking for it.
func (cl *Client) Primary() string {
	p, _, _ := cl.router.state()
	return p
}

// ClusterSize returns the number of nodes of the Iggy cluster's latest roster: 1 for a server
// without clustering (Iggy replicates every partition to every node, so this is the
// replication factor of every partition).
func (cl *Client) ClusterSize() int {
	_, n, _ := cl.router.state()
	return max(n, 1)
}

// Failovers returns how many times the client moved from one primary to another.
func (cl *Client) Failovers() uint64 {
	_, _, f := cl.router.state()
	return f
}

func (cl *Client) exchange(ctx context.Context, c *call, decode func([]byte) error) (err error) {
	defer observe(cl.cfg.Observer, c.code, time.Now(), &err)
	if cl.isClosed() {
		return ErrClosed
	}
	cn, err := cl.take(ctx)
	if err != nil {
		return &ConnError{Op: commandName(c.code), Err: err}
	}
	defer cl.give(cn)
	return cn.exchangeLocked(ctx, c, decode)
}

// take returns a locked connection of the pool: an idle one, or else the first one another
// call gives back (or ctx ends). The lock waits only for a keepalive ping in progress.
func (cl *Client) take(ctx context.Context) (*Conn, error) {
	var cn *Conn
	select {
	case cn = <-cl.idle:
	default:
		cl.waiting.Add(1)
		select {
		case cn = <-cl.idle:
			cl.waiting.Add(-1)
		case <-ctx.Done():
			cl.waiting.Add(-1)
			return nil, ctx.Err()
		}
	}
	if err := cn.lock(ctx); err != nil {
		cl.idle <- cn
		return nil, err
	}
	return cn, nil
}

// PoolStats reports the pool's connections, how many of them calls hold, and how many calls
// wait for one.
func (cl *Client) PoolStats() (size, inUse, waiting int) {
	size = len(cl.conns)
	return size, size - len(cl.idle), int(cl.waiting.Load())
}

// give returns a connection that take handed out.
func (cl *Client) give(cn *Conn) {
	cn.unlock()
	cl.idle <- cn
}

func (cl *Client) isClosed() bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.closed
}

// Acquire opens a dedicated connection with its own session, for state that Iggy ties to a
// session (consumer-group membership). release logs it out and closes it; Close closes any
// still acquired.
func (cl *Client) Acquire(ctx context.Context) (cn *Conn, release func(), err error) {
	cl.mu.Lock()
	closed := cl.closed
	cl.mu.Unlock()
	if closed {
		return nil, nil, ErrClosed
	}
	cn, err = dialConn(ctx, cl.cfg, cl.router)
	if err != nil {
		return nil, nil, err
	}
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		cn.Close()
		return nil, nil, ErrClosed
	}
	cl.acquired[cn] = struct{}{}
	cl.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			cl.mu.Lock()
			delete(cl.acquired, cn)
			cl.mu.Unlock()
			cn.Close()
		})
	}
	return cn, release, nil
}

// Close logs out and closes every connection. Calls made afterwards return ErrClosed.
func (cl *Client) Close() error {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		return nil
	}
	cl.closed = true
	if cl.stopRoster != nil {
		cl.stopRoster()
	}
	cl.router.shutdown() // a search for the primary must not hold the connections up
	conns := append([]*Conn(nil), cl.conns...)
	for cn := range cl.acquired {
		conns = append(conns, cn)
	}
	clear(cl.acquired)
	cl.mu.Unlock()
	var wg sync.WaitGroup
	for _, cn := range conns {
		wg.Go(func() { cn.Close() })
	}
	wg.Wait()
	if cl.rosterDone != nil {
		<-cl.rosterDone
	}
	cl.router.close()
	return nil
}

// VerifyLogin checks username/password by logging in on a fresh connection (to the first node
// of cfg.Addr that answers: any node of a cluster checks a login), with cfg's TLS settings,
// reads the user with permissions, and logs out. Wrong credentials
// return an *Error (42 InvalidCredentials, 47 UserInactive, ...); an unreachable server
// matches ErrConnection.
func VerifyLogin(ctx context.Context, cfg Config, username, password string) (*User, error) {
	cfg.Username, cfg.Password, cfg.Token = username, password, ""
	cfg.PingInterval = -1
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	r := newRouter(c, routeAnyNode)
	cn, err := dialConn(ctx, c, r)
	if err != nil {
		r.close()
		return nil, err
	}
	cn.owns = true
	defer cn.Close()
	me, err := cn.GetMe(ctx)
	if err != nil {
		return nil, err
	}
	u, err := cn.GetUser(ctx, ID(me.UserID))
	if err != nil {
		return nil, err
	}
	if u.ID != me.UserID {
		return nil, errors.New("iggy: GetUser returned another user")
	}
	return u, nil
}
