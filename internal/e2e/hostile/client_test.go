package hostile

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawConn is a Kafka connection that writes hand-built frames: the hostile shapes real
// clients never send.
type rawConn struct {
	nc   net.Conn
	corr int32
}

// dialFrom connects to addr from the loopback address local, so per-address limits see the
// health client and the attackers as different peers.
func dialFrom(local, addr string) (*rawConn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &rawConn{nc: nc}, nil
}

func (c *rawConn) Close() error { return c.nc.Close() }

// send writes req with its header.
func (c *rawConn) send(req kmsg.Request) error {
	c.corr++
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("hostile")).AppendRequest(nil, req, c.corr)
	_, err := c.nc.Write(frame)
	return err
}

// sendBody writes a request of api key and version with body as its body, as it is.
func (c *rawConn) sendBody(key, version int16, body []byte) error {
	c.corr++
	req := kmsg.RequestForKey(key)
	req.SetVersion(version)
	header := kmsg.NewRequestFormatter(kmsg.FormatterClientID("hostile")).AppendRequest(nil, req, c.corr)
	// The formatter wrote the header and an empty body: replace the body.
	empty := len(req.AppendTo(nil))
	header = header[:len(header)-empty]
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(header)-4+len(body)))
	frame = append(append(frame, header[4:]...), body...)
	_, err := c.nc.Write(frame)
	return err
}

// read reads one response frame's body (after the correlation id), within timeout.
func (c *rawConn) read(timeout time.Duration) ([]byte, error) {
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 1<<30 {
		return nil, fmt.Errorf("response frame of %d bytes", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(c.nc, buf); err != nil {
		return nil, err
	}
	return buf[4:], nil
}

// apiVersions asks for ApiVersions v0 on a new connection from local and returns how long the
// answer took.
func apiVersions(local, addr string, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	c, err := dialFrom(local, addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	if err := c.send(req); err != nil {
		return 0, err
	}
	body, err := c.read(timeout)
	if err != nil {
		return 0, err
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	if err := resp.ReadFrom(body); err != nil || resp.ErrorCode != 0 {
		return 0, fmt.Errorf("ApiVersions answer: %v, error code %d", err, resp.ErrorCode)
	}
	return time.Since(start), nil
}
