package gateway

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// By default one client address may open more connections than the old cap of 256 (issue 28:
// franz-go's group tests and hosts behind a NAT were refused): every one is served.
// MAX_CONNECTIONS still bounds them all (docs/LIMITS.md).
func TestNoPerAddressConnectionCapByDefault(t *testing.T) {
	g, _ := start(t, nil, "IGGY_KAFKA_MAX_CONNECTIONS=400")
	const conns = 300
	var open []net.Conn
	t.Cleanup(func() {
		for _, c := range open {
			c.Close()
		}
	})
	for i := range conns {
		c, err := net.Dial("tcp", g.kafkaAddr())
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		if err := apiVersionsRoundTrip(c, int32(i)); err != nil {
			t.Fatalf("connection %d of %d from one address: %v", i+1, conns, err)
		}
	}
}

// apiVersionsRoundTrip sends ApiVersions v0 on c and reads its answer's correlation id.
func apiVersionsRoundTrip(c net.Conn, corr int32) error {
	req := binary.BigEndian.AppendUint32(nil, 10) // length of what follows
	req = binary.BigEndian.AppendUint16(req, 18)  // ApiVersions
	req = binary.BigEndian.AppendUint16(req, 0)   // v0
	req = binary.BigEndian.AppendUint32(req, uint32(corr))
	req = binary.BigEndian.AppendUint16(req, 0xffff) // null client id
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(req); err != nil {
		return err
	}
	var head [8]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return err
	}
	if got := int32(binary.BigEndian.Uint32(head[4:])); got != corr {
		return io.ErrUnexpectedEOF
	}
	_, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(head[:4]))-4)
	return err
}
