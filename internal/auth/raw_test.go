package auth_test

import (
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawConn speaks hand-built Kafka frames, for what real clients never send.
type rawConn struct {
	t  *testing.T
	nc net.Conn
}

func dialRaw(t *testing.T, addr string, tlsCfg *tls.Config) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if tlsCfg != nil {
		nc = tls.Client(nc, tlsCfg)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc}
}

// send writes req as one frame with correlation id corr.
func (c *rawConn) send(req kmsg.Request, corr int32) {
	c.t.Helper()
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, corr)
	c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.nc.Write(frame); err != nil {
		c.t.Fatal(err)
	}
}

// frame reads one response frame (without its length), or nil when the gateway closed the
// connection.
func (c *rawConn) frame() []byte {
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var n [4]byte
	if _, err := io.ReadFull(c.nc, n[:]); err != nil {
		return nil
	}
	b := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(c.nc, b); err != nil {
		return nil
	}
	return b
}

// roundTrip sends req and decodes its response; it fails the test when the connection closes.
func (c *rawConn) roundTrip(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	c.send(req, 7)
	f := c.frame()
	if f == nil {
		c.t.Fatalf("%s: connection closed", kmsg.NameForKey(req.Key()))
	}
	resp := req.ResponseKind()
	body := f[4:]
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		body = body[1:] // empty header tags
	}
	if err := resp.ReadFrom(body); err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// closed reports whether the gateway closes the connection after req, without answering.
func (c *rawConn) closedAfter(req kmsg.Request) bool {
	c.t.Helper()
	c.send(req, 9)
	return c.frame() == nil
}

// authenticate runs SaslHandshake and SaslAuthenticate with a PLAIN message.
func (c *rawConn) authenticate(user, password string) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	return c.authenticateWith("PLAIN", "\x00"+user+"\x00"+password)
}

// authenticateBearer runs SaslHandshake and SaslAuthenticate with an OAUTHBEARER message.
func (c *rawConn) authenticateBearer(token string) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	return c.authenticateWith("OAUTHBEARER", "n,,\x01auth=Bearer "+token+"\x01\x01")
}

func (c *rawConn) authenticateWith(mechanism, msg string) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, mechanism
	if resp := c.roundTrip(hs).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
		c.t.Fatalf("handshake: error %d", resp.ErrorCode)
	}
	a := kmsg.NewPtrSASLAuthenticateRequest()
	a.Version = 2
	a.SASLAuthBytes = []byte(msg)
	return c.roundTrip(a).(*kmsg.SASLAuthenticateResponse)
}

func metadataRequest() *kmsg.MetadataRequest {
	m := kmsg.NewPtrMetadataRequest()
	m.Version = 9
	return m
}
