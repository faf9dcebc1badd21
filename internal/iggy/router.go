package iggy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// Failover pacing. Iggy's own cluster test expects a client to resume within 10 s of the
// primary's death (failover_client_continuity); the official SDK polls a leaderless roster
// every 250 ms. A probe (dial, login, GetClusterMetadata) gets at most probeTimeout: a backup
// that forwards a login to a dead primary answers only when its forward times out.
const (
	DefaultFailoverTimeout = 10 * time.Second
	DefaultRosterInterval  = 5 * time.Second
	rosterPoll             = 250 * time.Millisecond
	probeTimeout           = 2 * time.Second
)

// routeMode says how a router picks the node to dial.
type routeMode uint8

const (
	// routeLeader follows the cluster's primary: every write, administration and session must
	// go there (a backup answers them with TransientNotAccepted).
	routeLeader routeMode = iota
	// routeAnyNode takes the first reachable seed: for logins that only check credentials and
	// read (a backup authenticates a login itself).
	routeAnyNode
	// routeFixed dials one address and never moves: the probes that read a node's roster.
	routeFixed
)

// errNoLeader: a roster named no healthy leader (the cluster is between primaries).
var errNoLeader = errors.New("the Iggy roster names no healthy leader")

// errNoPrimary is wrapped by the error of a search for the primary that found none within
// Config.FailoverTimeout.
var errNoPrimary = errors.New("no Iggy primary")

// router knows which Iggy node a client's connections must use. In routeLeader mode it finds
// the primary from the seeds' rosters (GetClusterMetadata, after a login), and finds it again
// when a connection reports that its node refused it, dropped it or answered "not admitted
// here" (TransientNotAccepted), or when the roster names another leader. Connections compare
// the router's generation with the one they connected under and reconnect when it moved, so
// every connection of a pool follows one move (docs/DEPLOYMENT.md, "An Iggy cluster").
type router struct {
	cfg   *Config
	mode  routeMode
	seeds []string

	gen atomic.Uint64 // bumped at every move to another primary

	ctx    context.Context // ends discoveries when the client closes
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu           sync.Mutex
	primary      string    // the node requests go to; empty while unknown
	last         string    // the last primary confirmed, kept while primary is unknown
	nodes        []string  // the TCP addresses of the latest roster, in roster order
	size         int       // nodes in the latest roster; 0 before the first
	failovers    uint64    // moves from one confirmed primary to another
	troubleSince time.Time // the first failure seen on the current primary, zero when none
	confirmed    time.Time // when the primary was last confirmed
	flight       *flight   // the discovery running now, nil when none
	next         int       // routeAnyNode: the seed to try next
	closed       bool      // no discovery starts any more

	// Connections to the other nodes, for partition writes the leader did not admit
	// (partitionExchange), and the node that admitted the last one.
	side     map[string]*Conn
	partHint string
}

// errRouterClosed fails the searches asked for after the client closed.
var errRouterClosed = &ConnError{Op: "find primary", Err: errors.New("iggy: client closed")}

// flight is one discovery; waiters block on done.
type flight struct {
	done chan struct{}
	err  error
}

func newRouter(cfg *Config, mode routeMode) *router {
	r := &router{cfg: cfg, mode: mode, seeds: cfg.seeds()}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	if len(r.seeds) == 1 {
		// One address: it is the primary until its roster says it is part of a cluster. It is
		// not confirmed (last stays empty): finding the primary elsewhere is no failover.
		r.primary = r.seeds[0]
	}
	return r
}

// soleServer reports whether the router dials one server and nothing else could take its
// place: a login it did not admit now (TransientNotAccepted) is asked again of the same node.
// A probe, or a router with other nodes to try, moves on instead.
func (r *router) soleServer() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mode != routeFixed && !r.clusterLocked()
}

// clusterLocked reports whether the router follows a cluster: several seeds, or a roster of
// several nodes. Otherwise it behaves as a plain client of one server: it never searches,
// and a connection's own retries are all there is.
func (r *router) clusterLocked() bool {
	return len(r.seeds) > 1 || r.size > 1
}

// shutdown ends a running discovery and starts no other.
func (r *router) shutdown() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
}

// close shuts the router down, waits for a running discovery to end and closes the
// connections to other nodes.
func (r *router) close() {
	r.shutdown()
	r.wg.Wait()
	r.mu.Lock()
	side := r.side
	r.side = nil
	r.mu.Unlock()
	for _, cn := range side {
		cn.abandon()
	}
}

// partitionExchange sends c, a partition write (SendMessages, consumer offsets) that node from,
// the roster's leader, refused with TransientNotAccepted, to the other nodes of the roster in
// turn, the one that admitted the last such write first. In Iggy 0.9 every partition is a
// consensus group of its own, whose primary (the node of its view, view mod nodes) is not
// always the metadata primary the roster names leader: a partition created after a failover
// starts in view 0, and a partition's view change can elect another node than the metadata
// group's (a restarted node that has not caught up is skipped). Nothing forwards partition
// writes to their primary (core/server/config.toml), so the client finds it. A node that
// refuses too (58) or cannot be reached is skipped; ok is false when every node refused, and
// the caller goes on as for any TransientNotAccepted. A write sent to a node that then dropped
// the connection is not tried elsewhere: its error (MaybeApplied) is the answer.
func (r *router) partitionExchange(ctx context.Context, from string, c *call, decode func([]byte) error) (err error, ok bool) {
	if r.mode != routeLeader {
		return nil, false
	}
	r.mu.Lock()
	if r.closed || !r.clusterLocked() {
		r.mu.Unlock()
		return nil, false
	}
	candidates := dedupAddrs(append([]string{r.partHint}, r.nodes...))
	r.mu.Unlock()
	for _, addr := range candidates {
		if sameAddr(addr, from) {
			continue
		}
		cn, err := r.sideConn(ctx, addr)
		if err != nil {
			continue
		}
		err = cn.exchange(ctx, c, decode)
		switch {
		case IsCode(err, CodeTransientNotAccepted):
			continue
		case errors.Is(err, ErrConnection) && !MaybeApplied(err):
			r.dropSide(addr, cn)
			continue
		}
		r.mu.Lock()
		r.partHint = addr
		r.mu.Unlock()
		return err, true
	}
	return nil, false
}

// sideConn returns the router's connection to addr, dialing it the first time.
func (r *router) sideConn(ctx context.Context, addr string) (*Conn, error) {
	r.mu.Lock()
	cn := r.side[addr]
	r.mu.Unlock()
	if cn != nil {
		return cn, nil
	}
	ctx, cancel := context.WithTimeout(ctx, min(probeTimeout, r.cfg.DialTimeout))
	defer cancel()
	pc := *r.cfg
	pc.Addr, pc.PingInterval, pc.OnReconnect = addr, -1, nil
	cn, err := dialConn(ctx, &pc, newRouter(&pc, routeFixed))
	if err != nil {
		return nil, err
	}
	cn.owns, cn.side = true, true
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		go cn.abandon()
		return nil, errRouterClosed
	}
	if other := r.side[addr]; other != nil {
		go cn.abandon()
		return other, nil
	}
	if r.side == nil {
		r.side = map[string]*Conn{}
	}
	r.side[addr] = cn
	return cn, nil
}

// dropSide forgets the connection cn to addr and closes it.
func (r *router) dropSide(addr string, cn *Conn) {
	r.mu.Lock()
	if r.side[addr] == cn {
		delete(r.side, addr)
	}
	r.mu.Unlock()
	cn.abandon()
}

// moved reports whether the primary moved since generation gen.
func (r *router) moved(gen uint64) bool {
	return r.mode == routeLeader && r.gen.Load() != gen
}

// target returns the node to dial and the generation it belongs to, discovering the primary
// when it is unknown.
func (r *router) target(ctx context.Context) (string, uint64, error) {
	switch r.mode {
	case routeFixed:
		return r.seeds[0], 0, nil
	case routeAnyNode:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.seeds[r.next%len(r.seeds)], 0, nil
	}
	for {
		r.mu.Lock()
		if r.primary != "" || !r.clusterLocked() {
			addr, gen := r.primary, r.gen.Load()
			r.mu.Unlock()
			return addr, gen, nil
		}
		f := r.startLocked()
		r.mu.Unlock()
		select {
		case <-f.done:
			if f.err != nil {
				return "", 0, f.err
			}
		case <-ctx.Done():
			return "", 0, &ConnError{Op: "find primary", Err: ctx.Err()}
		}
	}
}

// failed records that addr (the target of generation gen) refused a connection or a login for
// a reason a retry may fix, and reports whether another target may be tried: in routeLeader
// mode the primary is found again; in routeAnyNode mode the next seed is tried.
func (r *router) failed(addr string, gen uint64, tries int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.mode {
	case routeFixed:
		return false
	case routeAnyNode:
		if r.seeds[r.next%len(r.seeds)] == addr {
			r.next++
		}
		return tries < len(r.seeds)
	}
	if !r.clusterLocked() {
		return false
	}
	if r.primary == addr && r.gen.Load() == gen {
		r.primary = ""
		if r.troubleSince.IsZero() {
			r.troubleSince = time.Now()
		}
	}
	return true
}

// notAccepted handles a TransientNotAccepted (58) from addr, the primary of generation gen: a
// backup's answer, or a primary's under pressure. It checks the roster again (at most every
// rosterPoll) and returns once the check ended or ctx did; the caller then resends, on the
// new primary if the router moved.
func (r *router) notAccepted(ctx context.Context, addr string, gen uint64) {
	if r.mode != routeLeader {
		return
	}
	r.mu.Lock()
	if !r.clusterLocked() || r.primary != addr || r.gen.Load() != gen || time.Since(r.confirmed) < rosterPoll {
		r.mu.Unlock()
		return
	}
	if r.troubleSince.IsZero() {
		r.troubleSince = time.Now()
	}
	f := r.startLocked()
	r.mu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
	}
}

// observeRoster takes a roster read on the current primary's connection: it keeps the node
// list current, and when the roster names another healthy leader it finds the primary again.
func (r *router) observeRoster(md *ClusterMetadata) {
	if r.mode != routeLeader {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setRosterLocked(md)
	leader, ok := healthyLeader(md)
	if len(md.Nodes) <= 1 || !ok || r.primary == "" || sameAddr(leader, r.primary) {
		return
	}
	r.startLocked()
}

// startLocked returns the running discovery, starting one if none runs.
func (r *router) startLocked() *flight {
	if r.flight != nil {
		return r.flight
	}
	if r.closed {
		f := &flight{done: make(chan struct{}), err: errRouterClosed}
		close(f.done)
		return f
	}
	f := &flight{done: make(chan struct{})}
	r.flight = f
	r.wg.Go(func() {
		addr, err := r.discover()
		r.finish(f, addr, err)
	})
	return f
}

// finish records a discovery's outcome and reports a move to the observer.
func (r *router) finish(f *flight, addr string, err error) {
	r.mu.Lock()
	r.flight = nil
	f.err = err
	var from string
	var resume time.Duration
	moved := false
	if err == nil {
		r.confirmed = time.Now()
		if addr != r.last {
			from, moved = r.last, true
			if !r.troubleSince.IsZero() {
				resume = time.Since(r.troubleSince)
			}
			if from != "" {
				r.failovers++
			}
			r.last = addr
			r.gen.Add(1)
		}
		r.primary = addr
		r.troubleSince = time.Time{}
	}
	r.mu.Unlock()
	// Before the waiters go on: the move is reported before any request runs on it.
	if moved {
		if po, ok := r.cfg.Observer.(PrimaryObserver); ok {
			po.PrimaryChanged(from, addr, resume)
		}
	}
	close(f.done)
}

// discover finds the node that is primary: it logs in to the known nodes and seeds in turn
// (the last primary first: its own roster is the freshest word on who replaced it) and reads
// each one's roster, until a node's roster names that node itself the healthy leader. A
// roster naming another node sends the search there first. A roster of one node (Iggy
// without clustering) makes the node dialled the primary, as does a server that cannot tell
// (GetClusterMetadata refused): the official SDK stays on such a node too. Without a leader it
// polls every rosterPoll, for up to Config.FailoverTimeout.
func (r *router) discover() (string, error) {
	ctx, cancel := context.WithTimeout(r.ctx, r.cfg.FailoverTimeout)
	defer cancel()
	var lastErr error
	for {
		r.mu.Lock()
		queue := dedupAddrs(append(append([]string{r.last}, r.nodes...), r.seeds...))
		r.mu.Unlock()
		tried := map[string]bool{}
		for len(queue) > 0 {
			c := queue[0]
			queue = queue[1:]
			if tried[c] {
				continue
			}
			tried[c] = true
			md, err := r.probe(ctx, c)
			if err != nil {
				var se *Error
				if errors.As(err, &se) && isCredentialCode(se.Code) {
					return "", err
				}
				lastErr = err
				continue
			}
			if md == nil || len(md.Nodes) <= 1 {
				return c, nil
			}
			r.mu.Lock()
			r.setRosterLocked(md)
			r.mu.Unlock()
			leader, ok := healthyLeader(md)
			switch {
			case !ok:
				lastErr = fmt.Errorf("%s: %w", c, errNoLeader)
			case sameAddr(leader, c):
				return c, nil
			case !tried[leader]:
				queue = append([]string{leader}, queue...)
			}
		}
		if sleep(ctx, rosterPoll) != nil {
			if lastErr == nil {
				lastErr = ctx.Err()
			}
			return "", &ConnError{Op: "find primary", Err: fmt.Errorf("%w: no node of %s answered as primary within %s: %w",
				errNoPrimary, strings.Join(r.seeds, ","), r.cfg.FailoverTimeout, lastErr)}
		}
	}
}

// probe logs in to addr and reads its roster. It returns a nil roster when the node answered
// the login but cannot tell its roster (GetClusterMetadata refused with an answer other than
// "not now", or unreadable): the official SDK stays on such a node too.
func (r *router) probe(ctx context.Context, addr string) (*ClusterMetadata, error) {
	ctx, cancel := context.WithTimeout(ctx, min(probeTimeout, r.cfg.DialTimeout))
	defer cancel()
	pc := *r.cfg
	pc.Addr, pc.PingInterval, pc.OnReconnect = addr, -1, nil
	pc.Observer = probeObserver{r.cfg.Observer}
	fixed := newRouter(&pc, routeFixed)
	cn, err := dialConn(ctx, &pc, fixed)
	if err != nil {
		fixed.close()
		return nil, err
	}
	cn.owns = true
	defer cn.abandon()
	md, err := cn.GetClusterMetadata(ctx)
	switch {
	case err == nil:
		return md, nil
	case errors.Is(err, ErrConnection) || ctx.Err() != nil ||
		IsCode(err, CodeTransientNotAccepted, CodeTransientNotCommitted, CodeUnauthenticated):
		return nil, err
	}
	return nil, nil
}

// setRosterLocked keeps the node list of md.
func (r *router) setRosterLocked(md *ClusterMetadata) {
	nodes := make([]string, 0, len(md.Nodes))
	for _, n := range md.Nodes {
		if n.TCPPort != 0 && n.IP != "" {
			nodes = append(nodes, nodeAddr(n))
		}
	}
	r.nodes, r.size = nodes, len(md.Nodes)
}

// state returns the current primary (empty while unknown), the number of nodes of the latest
// roster and the failovers so far.
func (r *router) state() (primary string, size int, failovers uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.primary, r.size, r.failovers
}

// healthyLeader returns the TCP address of the roster's healthy leader.
func healthyLeader(md *ClusterMetadata) (string, bool) {
	for _, n := range md.Nodes {
		if n.Role == wire.NodeRoleLeader && n.Status == wire.NodeStatusHealthy && n.TCPPort != 0 && n.IP != "" {
			return nodeAddr(n), true
		}
	}
	return "", false
}

func nodeAddr(n ClusterNode) string {
	return net.JoinHostPort(n.IP, strconv.Itoa(int(n.TCPPort)))
}

// sameAddr reports whether two host:port name the same endpoint: IPs compared canonically,
// host names without case, and localhost as 127.0.0.1.
func sameAddr(a, b string) bool {
	return normAddr(a) == normAddr(b)
}

func normAddr(a string) string {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return strings.ToLower(a)
	}
	host = strings.ToLower(host)
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().String()
	}
	return net.JoinHostPort(host, port)
}

// dedupAddrs drops empty and repeated (sameAddr) entries, keeping the first.
func dedupAddrs(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, a := range in {
		if a == "" || seen[normAddr(a)] {
			continue
		}
		seen[normAddr(a)] = true
		out = append(out, a)
	}
	return out
}

// probeObserver passes a probe's login rejections on and keeps its commands out of the
// request metrics.
type probeObserver struct{ o Observer }

func (p probeObserver) CommandDone(string, time.Duration, Outcome) {}
func (p probeObserver) LoginRejected(err error)                    { p.o.LoginRejected(err) }
