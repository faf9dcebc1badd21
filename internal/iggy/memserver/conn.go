package memserver

import (
	"bufio"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// keptBodyBuffer is the largest request or reply buffer a connection keeps between requests.
const keptBodyBuffer = 4 << 20

// conn serves one client connection: it reads one request at a time (clients are lockstep)
// and answers each before reading the next.
type conn struct {
	srv *Server
	nc  net.Conn
	br  *bufio.Reader

	wmu sync.Mutex // guards bw: the heartbeat verifier may write an eviction concurrently
	bw  *bufio.Writer

	smu  sync.Mutex
	sess *session // nil until login, and again after logout

	lastSeen atomic.Int64 // unix nanos of the last request
	hdr      [wire.HeaderSize]byte
	body     []byte
	out      []byte // reply body scratch, reused across requests
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{srv: s, nc: nc, br: bufio.NewReaderSize(nc, 64<<10), bw: bufio.NewWriterSize(nc, 64<<10)}
	c.lastSeen.Store(time.Now().UnixNano())
	return c
}

func (c *conn) session() *session {
	c.smu.Lock()
	defer c.smu.Unlock()
	return c.sess
}

func (c *conn) setSession(s *session) {
	c.smu.Lock()
	c.sess = s
	c.smu.Unlock()
}

func (c *conn) serve() {
	log := c.srv.log.With("remote", c.nc.RemoteAddr().String())
	log.Debug("connection opened")
	defer func() {
		c.nc.Close()
		if s := c.session(); s != nil {
			c.srv.state.closeSession(s)
			c.setSession(nil)
		}
		log.Debug("connection closed")
	}()
	for {
		body, err := wire.ReadFrame(c.br, &c.hdr, c.body)
		if err != nil {
			if err != io.EOF {
				log.Debug("dropping connection: unreadable frame", "err", err)
			}
			return
		}
		if cap(body) > cap(c.body) {
			c.body = body[:0]
		}
		c.lastSeen.Store(time.Now().UnixNano())
		h, err := wire.DecodeRequestHeader(c.hdr[:])
		if err == nil {
			err = h.Validate()
		}
		if err != nil {
			// The real server drops such frames without an answer, which leaves a client
			// waiting forever; closing the connection tells it at once.
			log.Debug("dropping connection: invalid request header", "err", err)
			return
		}
		if !c.handle(&h, body) {
			return
		}
		// Do not pin large buffers on a connection after one big request or reply.
		if cap(c.body) > keptBodyBuffer {
			c.body = nil
		}
		if cap(c.out) > keptBodyBuffer {
			c.out = nil
		}
	}
}

func (c *conn) idleFor() time.Duration {
	return time.Duration(time.Now().UnixNano() - c.lastSeen.Load())
}

func (c *conn) inAnyGroup() bool {
	s := c.session()
	if s == nil {
		return false
	}
	return len(c.srv.state.me(s).ConsumerGroups) > 0
}

// evictStale ends a silent group member's session with a StaleClient eviction.
func (c *conn) evictStale() {
	s := c.session()
	if s == nil {
		return
	}
	c.srv.log.Info("evicting stale client", "session", s.id)
	_ = c.evict(s.client, wire.EvictStaleClient)
	c.nc.Close()
}

// reply writes a Reply frame answering h with status and the concatenation of parts.
func (c *conn) reply(h *wire.RequestHeader, status uint32, parts ...[]byte) error {
	size := wire.HeaderSize
	for _, p := range parts {
		size += len(p)
	}
	var op uint64
	var commit uint64
	if s := c.session(); s != nil {
		op = s.id
		commit = max(c.srv.state.commitPosition(), s.id)
	}
	rh := wire.ReplyHeader{
		Size:            uint32(size),
		RequestChecksum: h.RequestChecksum,
		Client:          h.Client,
		Op:              op,
		Commit:          commit,
		Timestamp:       h.Timestamp,
		Request:         h.Request,
		Operation:       h.Operation,
		Status:          status,
	}
	var hdr [wire.HeaderSize]byte
	wire.PutReplyHeader(hdr[:], &rh)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.bw.Write(hdr[:]); err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := c.bw.Write(p); err != nil {
			return err
		}
	}
	return c.bw.Flush()
}

// evict writes an Eviction frame; the caller closes the connection afterwards.
func (c *conn) evict(client [16]byte, reason uint8) error {
	eh := wire.EvictionHeader{Client: client, Reason: reason}
	if reason == wire.EvictIncompatibleProtocol {
		eh.ServerProtocolVersion = wire.ProtocolVersion
		eh.ServerProtocolVersionMin = wire.ProtocolVersion &^ 0x3ff
	}
	var hdr [wire.HeaderSize]byte
	wire.PutEvictionHeader(hdr[:], &eh)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.bw.Write(hdr[:]); err != nil {
		return err
	}
	return c.bw.Flush()
}
