package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
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
	if err := c.write(req, corr); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawConn) write(req kmsg.Request, corr int32) error {
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, corr)
	_, err := c.nc.Write(frame)
	return err
}

// frame returns the next response frame without its length prefix, or nil when the gateway
// closed the connection.
func (c *rawConn) frame() []byte {
	c.t.Helper()
	f, err := c.readFrame()
	if err != nil {
		c.t.Fatal(err)
	}
	return f
}

// readFrame is frame for any goroutine: nil, nil when the gateway closed the connection.
func (c *rawConn) readFrame() ([]byte, error) {
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var prefix [4]byte
	if _, err := io.ReadFull(c.nc, prefix[:]); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, errors.New("timed out waiting for a response or close")
		}
		return nil, nil
	}
	f := make([]byte, binary.BigEndian.Uint32(prefix[:]))
	if _, err := io.ReadFull(c.nc, f); err != nil {
		return nil, err
	}
	return f, nil
}

// roundTrip sends req and decodes the response at the request's version.
func (c *rawConn) roundTrip(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	resp, err := c.exchange(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// exchange is roundTrip for goroutines other than the test's: it reports failures as errors.
func (c *rawConn) exchange(req kmsg.Request) (kmsg.Response, error) {
	name := fmt.Sprintf("%s v%d", kmsg.NameForKey(req.Key()), req.GetVersion())
	if err := c.write(req, 42); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f, err := c.readFrame()
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	case f == nil:
		return nil, fmt.Errorf("%s: connection closed", name)
	}
	if corr := int32(binary.BigEndian.Uint32(f)); corr != 42 {
		return nil, fmt.Errorf("%s: correlation id %d", name, corr)
	}
	resp := req.ResponseKind()
	body := f[4:]
	if resp.IsFlexible() && resp.Key() != kmsg.ApiVersions.Int16() {
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode %s response: %w", name, err)
	}
	return resp, nil
}
