package e2e

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// gatewayPackage is the main package the harness builds.
const gatewayPackage = "./cmd/iggy-gateway-kafka"

// buildGateway compiles the gateway into dir and returns the binary's path. It is built with
// the race detector: the end-to-end traffic of real clients finds races unit tests miss.
func buildGateway(repoRoot, dir string) (string, error) {
	bin := filepath.Join(dir, "iggy-gateway-kafka")
	cmd := exec.Command("go", "build", "-race", "-o", bin, gatewayPackage)
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", gatewayPackage, err, out)
	}
	return bin, nil
}

// repoRoot returns the directory holding go.mod, searching up from the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// gatewayProcess is one running gateway.
type gatewayProcess struct {
	addr string
	cmd  *exec.Cmd
	logs *logBuffer
	done chan struct{} // closed when the process has exited
	err  error         // exit status, valid after done
}

// iggyTarget is the Iggy server a gateway bridges to.
type iggyTarget struct {
	addr, username, password string
}

// startGateway starts bin listening on a free loopback port, bridged to iggy, with extraEnv
// (IGGY_KAFKA_* settings) added, and waits until it answers ApiVersions.
func startGateway(bin string, iggy iggyTarget, extraEnv ...string) (*gatewayProcess, *kmsg.ApiVersionsResponse, error) {
	// A port picked by listening and closing can be taken before the gateway binds it, so try
	// a few times.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		addr, err := freeLoopbackAddr()
		if err != nil {
			return nil, nil, err
		}
		g, err := spawnGateway(bin, addr, iggy, extraEnv)
		if err != nil {
			return nil, nil, err
		}
		versions, err := g.waitReady(60 * time.Second)
		if err == nil {
			return g, versions, nil
		}
		g.stop()
		lastErr = fmt.Errorf("%v\ngateway output:\n%s", err, indent(g.logs.since(0)))
	}
	return nil, nil, lastErr
}

func spawnGateway(bin, addr string, iggy iggyTarget, extraEnv []string) (*gatewayProcess, error) {
	cmd := exec.Command(bin)
	cmd.Env = append(gatewayBaseEnv(),
		"IGGY_KAFKA_BIND_ADDR="+addr,
		"IGGY_KAFKA_BRIDGE_ENABLED=true",
		"IGGY_KAFKA_IGGY_ADDR="+iggy.addr,
		"IGGY_KAFKA_IGGY_USERNAME="+iggy.username,
		"IGGY_KAFKA_IGGY_PASSWORD="+iggy.password,
		"IGGY_KAFKA_IGGY_STREAM="+kafkaStream,
		"IGGY_KAFKA_LOG_LEVEL=debug",
	)
	cmd.Env = append(cmd.Env, extraEnv...)
	logs := newLogBuffer(8 << 20)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start gateway: %w", err)
	}
	g := &gatewayProcess{addr: addr, cmd: cmd, logs: logs, done: make(chan struct{})}
	go func() {
		g.err = cmd.Wait()
		close(g.done)
	}()
	return g, nil
}

// gatewayBaseEnv is the test process's environment without IGGY_KAFKA_* variables: the
// gateway refuses names it does not know, and a setting left in the caller's shell must not
// change what the tests start.
func gatewayBaseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IGGY_KAFKA_") {
			env = append(env, kv)
		}
	}
	// A data race in the gateway fails the run (see checkRaces) instead of going unnoticed.
	return append(env, "GORACE=halt_on_error=0 exitcode=66")
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitReady polls until the gateway accepts a connection and answers an ApiVersions request,
// or it exits, or timeout passes.
func (g *gatewayProcess) waitReady(timeout time.Duration) (*kmsg.ApiVersionsResponse, error) {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-g.done:
			return nil, fmt.Errorf("gateway exited before it was ready: %v", g.err)
		default:
		}
		resp, err := probeAPIVersions(g.addr, 5*time.Second)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("gateway at %s not ready after %s: %v", g.addr, timeout, lastErr)
}

// probeAPIVersions sends one ApiVersions v3 request on a fresh connection and decodes the
// answer. It is the readiness check and also what scenarios compare client output against.
func probeAPIVersions(addr string, timeout time.Duration) (*kmsg.ApiVersionsResponse, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
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

// stop sends SIGTERM, waits for the drain, then kills. It returns the exit error.
func (g *gatewayProcess) stop() error {
	select {
	case <-g.done:
		return g.err
	default:
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
		<-g.done
	}
	return g.err
}

// exited reports whether the process has ended, and how.
func (g *gatewayProcess) exited() (bool, error) {
	select {
	case <-g.done:
		return true, g.err
	default:
		return false, nil
	}
}

// logBuffer keeps the last max bytes a process printed, addressed by absolute byte position so
// each scenario can dump only what was printed while it ran.
type logBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64 // bytes discarded from the front
}

func newLogBuffer(max int) *logBuffer { return &logBuffer{max: max} }

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.dropped += int64(over)
	}
	return len(p), nil
}

// mark returns the current end position.
func (b *logBuffer) mark() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped + int64(len(b.buf))
}

// since returns what was written after position pos (what is still kept of it).
func (b *logBuffer) since(pos int64) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	start := pos - b.dropped
	prefix := ""
	if start < 0 {
		prefix = "[... " + strconv.FormatInt(-start, 10) + " earlier bytes dropped ...]\n"
		start = 0
	}
	return prefix + string(b.buf[start:])
}

// raceReports returns the data race reports the process printed, if any.
func (b *logBuffer) raceReports() string {
	text := b.since(0)
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
