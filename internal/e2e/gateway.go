package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
)

// iggyTarget is the Iggy server a gateway bridges to.
type iggyTarget struct {
	addr, username, password string
}

// gatewayConfig is how the harness runs a gateway bridged to iggy: logging at debug, with
// extraEnv (IGGY_KAFKA_* settings) added.
func gatewayConfig(iggy iggyTarget, extraEnv []string) childproc.GatewayConfig {
	return childproc.GatewayConfig{
		Iggy:     childproc.Iggy{Addr: iggy.addr, Username: iggy.username, Password: iggy.password, Stream: kafkaStream},
		LogLevel: "debug",
		// A data race in the gateway fails the run (see raceReports) instead of going unnoticed.
		Env:         append([]string{"GORACE=halt_on_error=0 exitcode=66"}, extraEnv...),
		OutputLimit: 8 << 20,
	}
}

// startGatewayTLS starts bin on a free loopback port, bridged to iggy, with extraEnv
// (IGGY_KAFKA_* settings) added, and waits until it answers ApiVersions, over TLS with tlsCfg
// when the listener uses TLS (nil: plaintext).
func startGatewayTLS(bin string, iggy iggyTarget, tlsCfg *tls.Config, extraEnv ...string) (*childproc.Gateway, *kmsg.ApiVersionsResponse, error) {
	var versions *kmsg.ApiVersionsResponse
	g, err := childproc.StartGateway(context.Background(), bin, gatewayConfig(iggy, extraEnv),
		func(_ context.Context, g *childproc.Gateway) (err error) {
			versions, err = waitReadyTLS(g, 60*time.Second, tlsCfg)
			return err
		})
	return g, versions, err
}

// waitReady polls until the gateway accepts a connection and answers an ApiVersions request,
// or it exits, or timeout passes.
func waitReady(g *childproc.Gateway, timeout time.Duration) (*kmsg.ApiVersionsResponse, error) {
	return waitReadyTLS(g, timeout, nil)
}

// waitReadyTLS is waitReady over TLS with tlsCfg (nil: plaintext).
func waitReadyTLS(g *childproc.Gateway, timeout time.Duration, tlsCfg *tls.Config) (*kmsg.ApiVersionsResponse, error) {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		if dead, err := g.Exited(); dead {
			return nil, fmt.Errorf("gateway exited before it was ready: %v", err)
		}
		resp, err := probeAPIVersionsTLS(g.Addr, 5*time.Second, tlsCfg)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("gateway at %s not ready after %s: %v", g.Addr, timeout, lastErr)
}

// probeAPIVersions sends one ApiVersions v3 request on a fresh connection and decodes the
// answer. It is the readiness check and also what scenarios compare client output against.
func probeAPIVersions(addr string, timeout time.Duration) (*kmsg.ApiVersionsResponse, error) {
	return probeAPIVersionsTLS(addr, timeout, nil)
}

// probeAPIVersionsTLS is probeAPIVersions over TLS with tlsCfg (nil: plaintext).
func probeAPIVersionsTLS(addr string, timeout time.Duration, tlsCfg *tls.Config) (*kmsg.ApiVersionsResponse, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		conn = tls.Client(conn, tlsCfg)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName = "iggygw-e2e-harness"
	req.ClientSoftwareVersion = "1"
	const correlationID = 7
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("iggygw-e2e")).AppendRequest(nil, req, correlationID)
	if _, err := conn.Write(frame); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, fmt.Errorf("read ApiVersions response size: %w", err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 1<<20 {
		return nil, fmt.Errorf("ApiVersions response size %d out of range", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(conn, body); err != nil {
		return nil, fmt.Errorf("read ApiVersions response: %w", err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != correlationID {
		return nil, fmt.Errorf("ApiVersions response correlation id %d, want %d", got, correlationID)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = req.Version
	// The ApiVersions response header has no tagged fields (KIP-511), so the body follows the
	// correlation id directly.
	if err := resp.ReadFrom(body[4:]); err != nil {
		return nil, fmt.Errorf("decode ApiVersions response: %w", err)
	}
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("ApiVersions error code %d", resp.ErrorCode)
	}
	return resp, nil
}

// raceReports returns the data race reports a process printed, if any.
func raceReports(printed *childproc.Output) string {
	text := printed.String()
	var out strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "WARNING: DATA RACE") {
			in = true
		}
		if in {
			out.WriteString(line + "\n")
		}
		if in && line == "==================" {
			in = false
		}
	}
	return out.String()
}
