package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggygw/iggy-gateway-kafka/cmd/iggy-gateway-load/pprofhook"
)

// gatewayPackage is the gateway's main package, relative to the repository root.
const gatewayPackage = "./cmd/iggy-gateway-kafka"

// hookImportPath is the import path of package pprofhook, which a profiling build links in.
const hookImportPath = "github.com/iggygw/iggy-gateway-kafka/cmd/iggy-gateway-load/pprofhook"

// buildGateway compiles the gateway into dir. With hook, package pprofhook is linked in
// through a build overlay that adds one importing file to the gateway's main package; the
// sources on disk are not changed. The build has no race detector: it is what is measured.
func buildGateway(ctx context.Context, dir string, hook bool) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "iggy-gateway-kafka")
	args := []string{"build", "-o", bin}
	if hook {
		overlay, err := writeHookOverlay(root, dir)
		if err != nil {
			return "", err
		}
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, gatewayPackage)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", gatewayPackage, err, out)
	}
	return bin, nil
}

// writeHookOverlay writes the file that imports pprofhook and the overlay that places it in
// the gateway's package directory, and returns the overlay's path.
func writeHookOverlay(root, dir string) (string, error) {
	src := filepath.Join(dir, "pprofhook_import.go")
	code := "package main\n\nimport _ \"" + hookImportPath + "\"\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		return "", err
	}
	target := filepath.Join(root, gatewayPackage, "zz_load_pprofhook.go")
	overlay := filepath.Join(dir, "overlay.json")
	body := fmt.Sprintf(`{"Replace": {%q: %q}}`, target, src)
	return overlay, os.WriteFile(overlay, []byte(body), 0o644)
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
			return "", errors.New("go.mod not found above the working directory: run from the repository or pass --gateway-bin")
		}
		dir = parent
	}
}

// gatewayProc is a gateway started as a child process.
type gatewayProc struct {
	addr      string // Kafka listener
	pprofAddr string // pprofhook endpoint, "" without the hook
	cmd       *exec.Cmd
	out       *tailBuffer
	done      chan struct{} // closed when the process has exited
	err       error         // exit status, valid after done
}

// iggyTarget is the Iggy server and account a started gateway bridges to.
type iggyTarget struct{ addr, username, password, stream string }

// startGateway starts bin on a free loopback port and waits until it answers. A port picked
// by listening and closing can be taken before the gateway binds it, so it tries a few times.
func startGateway(ctx context.Context, bin string, iggy iggyTarget, hook bool, extraEnv []string) (*gatewayProc, error) {
	var lastErr error
	for range 3 {
		g, err := spawnGateway(bin, iggy, hook, extraEnv)
		if err != nil {
			return nil, err
		}
		if lastErr = g.waitReady(ctx, time.Minute); lastErr == nil {
			return g, nil
		}
		g.stop()
		lastErr = fmt.Errorf("%v\ngateway output:\n%s", lastErr, g.out.String())
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func spawnGateway(bin string, iggy iggyTarget, hook bool, extraEnv []string) (*gatewayProc, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	g := &gatewayProc{addr: addr, out: newTailBuffer(64 << 10), done: make(chan struct{})}
	env := append(baseEnv(),
		"IGGY_KAFKA_BIND_ADDR="+addr,
		"IGGY_KAFKA_BRIDGE_ENABLED=true",
		"IGGY_KAFKA_IGGY_ADDR="+iggy.addr,
		"IGGY_KAFKA_IGGY_USERNAME="+iggy.username,
		"IGGY_KAFKA_IGGY_PASSWORD="+iggy.password,
		"IGGY_KAFKA_IGGY_STREAM="+iggy.stream,
		"IGGY_KAFKA_LOG_LEVEL=warn",
	)
	if hook {
		if g.pprofAddr, err = freeLoopbackAddr(); err != nil {
			return nil, err
		}
		env = append(env, pprofhook.EnvAddr+"="+g.pprofAddr)
	}
	g.cmd = exec.Command(bin)
	g.cmd.Env = append(env, extraEnv...) // later entries win, so --gateway-env overrides
	g.cmd.Stdout, g.cmd.Stderr = g.out, g.out
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := g.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start gateway: %w", err)
	}
	go func() {
		g.err = g.cmd.Wait()
		close(g.done)
	}()
	return g, nil
}

// baseEnv is this process's environment without IGGY_KAFKA_* variables (the gateway refuses
// names it does not know, and a setting left in the shell must not change what is measured).
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IGGY_KAFKA_") && !strings.HasPrefix(kv, pprofhook.EnvAddr+"=") {
			env = append(env, kv)
		}
	}
	return env
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitReady waits until the gateway answers ApiVersions, or exits, or timeout passes.
func (g *gatewayProc) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := waitKafka(ctx, g.addr, g.done); err != nil {
		if g.exited() {
			return fmt.Errorf("gateway exited before it was ready: %v", g.err)
		}
		return err
	}
	return nil
}

// waitKafka polls addr with ApiVersions until it answers, ctx ends or exited is closed.
func waitKafka(ctx context.Context, addr string, exited <-chan struct{}) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := cl.Ping(pctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no Kafka answer from %s: %v", addr, err)
		case <-exited:
			return errors.New("process exited")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (g *gatewayProc) pid() int { return g.cmd.Process.Pid }

func (g *gatewayProc) exited() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, waits for the drain, then kills. It returns the exit error.
func (g *gatewayProc) stop() error {
	if !g.exited() {
		_ = g.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-g.done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
			<-g.done
		}
	}
	return g.err
}

// tailBuffer keeps the last bytes a process printed.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
