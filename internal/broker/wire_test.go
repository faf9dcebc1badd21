package broker

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawConn speaks hand-built frames to the gateway.
type rawConn struct {
	t  *testing.T
	nc net.Conn
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc}
}

func (c *rawConn) send(req kmsg.Request, corr int32) {
	c.t.Helper()
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, corr)
	if _, err := c.nc.Write(frame); err != nil {
		c.t.Fatal(err)
	}
}

// frame returns the next response frame without its length prefix, or nil when the gateway
// closed the connection.
func (c *rawConn) frame() []byte {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var prefix [4]byte
	if _, err := io.ReadFull(c.nc, prefix[:]); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.t.Fatal("timed out waiting for a response or close")
		}
		return nil
	}
	f := make([]byte, binary.BigEndian.Uint32(prefix[:]))
	if _, err := io.ReadFull(c.nc, f); err != nil {
		c.t.Fatal(err)
	}
	return f
}

// roundTrip sends req and decodes the response at the request's version.
func (c *rawConn) roundTrip(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	c.send(req, 42)
	f := c.frame()
	if f == nil {
		c.t.Fatalf("%s v%d: connection closed", kmsg.NameForKey(req.Key()), req.GetVersion())
	}
	if corr := int32(binary.BigEndian.Uint32(f)); corr != 42 {
		c.t.Fatalf("correlation id %d", corr)
	}
	resp := req.ResponseKind()
	body := f[4:]
	if resp.IsFlexible() && resp.Key() != kmsg.ApiVersions.Int16() {
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		c.t.Fatalf("decode %s v%d response: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp
}
