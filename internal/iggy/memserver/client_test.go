package memserver

import (
	"crypto/rand"
	"net"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// rawClient speaks the wire protocol frame by frame, so tests can check exact reply shapes
// (status vs result section, echoed fields, evictions) that a real client would hide.
type rawClient struct {
	t       testing.TB
	nc      net.Conn
	client  [16]byte
	session uint64
	request uint64
	hdr     [wire.HeaderSize]byte
}

// frame is one frame read from the server.
type frame struct {
	command  uint8
	reply    wire.ReplyHeader
	eviction wire.EvictionHeader
	body     []byte
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &rawClient{t: t, nc: nc}
	_, _ = rand.Read(c.client[:])
	c.client[0] |= 1
	return c
}

// write sends a request frame built from h and body.
func (c *rawClient) write(h wire.RequestHeader, body []byte) {
	c.t.Helper()
	h.Size = uint32(wire.HeaderSize + len(body))
	if h.Client == ([16]byte{}) {
		h.Client = c.client
	}
	buf := make([]byte, wire.HeaderSize, int(h.Size))
	wire.PutRequestHeader(buf, &h)
	if _, err := c.nc.Write(append(buf, body...)); err != nil {
		c.t.Fatal(err)
	}
}

// read reads one frame; ok is false if the server closed the connection.
func (c *rawClient) read() (f frame, ok bool) {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	body, err := wire.ReadFrame(c.nc, &c.hdr, nil)
	if err != nil {
		return f, false
	}
	f.command, f.body = c.hdr[60], body
	switch f.command {
	case wire.CommandReply:
		if f.reply, err = wire.DecodeReplyHeader(c.hdr[:]); err != nil {
			c.t.Fatal(err)
		}
	case wire.CommandEviction:
		if f.eviction, err = wire.DecodeEvictionHeader(c.hdr[:]); err != nil {
			c.t.Fatal(err)
		}
	default:
		c.t.Fatalf("frame command %d", f.command)
	}
	return f, true
}

// header returns the request header for code as a session client numbers it.
func (c *rawClient) header(code uint32) wire.RequestHeader {
	op := wire.OperationForCode(code)
	h := wire.RequestHeader{Operation: op, Session: c.session, Request: c.request, Code: code}
	if wire.AdvancesRequest(op) {
		c.request++
	}
	return h
}

// call sends code with body and returns the reply, failing on anything else.
func (c *rawClient) call(code uint32, body []byte) frame {
	c.t.Helper()
	h := c.header(code)
	c.write(h, body)
	f, ok := c.read()
	if !ok || f.command != wire.CommandReply {
		c.t.Fatalf("code %d: no reply (closed %v, command %d)", code, !ok, f.command)
	}
	if f.reply.Request != h.Request || f.reply.Operation != h.Operation || f.reply.Client != c.client {
		c.t.Fatalf("code %d: reply echoes request %d op %d, sent %d op %d", code, f.reply.Request, f.reply.Operation, h.Request, h.Operation)
	}
	return f
}

// ok calls code and returns the payload of a successful reply (result section stripped).
func (c *rawClient) ok(code uint32, body []byte) []byte {
	c.t.Helper()
	f := c.call(code, body)
	if f.reply.Status != 0 {
		c.t.Fatalf("code %d: status %d", code, f.reply.Status)
	}
	if !wire.IsResultFramed(wire.OperationForCode(code)) {
		return f.body
	}
	payload, rc, err := wire.ParseResult(f.body)
	if err != nil || rc != 0 {
		c.t.Fatalf("code %d: result %d (%v)", code, rc, err)
	}
	return payload
}

func loginBody(user, pass string) []byte {
	return wire.AppendLoginUser(nil, wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "test", SDKVersion: "1"}, user, pass)
}

// login registers with username and password.
func (c *rawClient) login(user, pass string) {
	c.t.Helper()
	c.write(wire.RequestHeader{Operation: wire.OpRegister}, loginBody(user, pass))
	f, ok := c.read()
	if !ok || f.command != wire.CommandReply || f.reply.Status != 0 {
		c.t.Fatalf("login failed: closed %v command %d eviction %d", !ok, f.command, f.eviction.Reason)
	}
	payload, rc, err := wire.ParseResult(f.body)
	if err != nil || rc != 0 {
		c.t.Fatalf("login result %d (%v)", rc, err)
	}
	lr, err := wire.DecodeLoginReply(payload)
	if err != nil {
		c.t.Fatal(err)
	}
	c.session, c.request = lr.Session, 1
}

func connect(t testing.TB, srv *Server) *rawClient {
	t.Helper()
	c := dialRaw(t, srv.Addr())
	c.login("iggy", "iggy")
	return c
}
