package childproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// GatewayPackage is the gateway's main package, relative to the repository root.
const GatewayPackage = "./cmd/iggy-gateway-kafka"

// gatewayStopGrace is how long Gateway.Stop lets the gateway drain after SIGTERM.
const gatewayStopGrace = 30 * time.Second

// Module is the gateway's module path: RepoRoot looks for the go.mod that declares it.
const Module = "github.com/iggygw/iggy-gateway-kafka"

// RepoRoot returns the directory holding the gateway's go.mod, searching up from the working
// directory. Other go.mod files on the way are skipped: the end-to-end tests are a module of
// their own nested in the repository (internal/e2e/go.mod).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(data) == Module {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("the go.mod of %s not found above the working directory", Module)
		}
		dir = parent
	}
}

// modulePath returns the module path a go.mod declares ("" if none).
func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// BuildGateway compiles the gateway of the repository at root into dir, with go build's
// flags added (-race, -overlay ...), and returns the binary's path.
func BuildGateway(ctx context.Context, root, dir string, flags ...string) (string, error) {
	bin := filepath.Join(dir, "iggy-gateway-kafka")
	args := append(append([]string{"build", "-o", bin}, flags...), GatewayPackage)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", GatewayPackage, err, out)
	}
	return bin, nil
}

// FreeLoopbackAddr reserves a loopback port and releases it for a program to bind.
func FreeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Iggy is the Iggy server, account and stream a gateway bridges to.
type Iggy struct {
	Addr, Username, Password, Stream string
}

// GatewayConfig is how a gateway runs.
type GatewayConfig struct {
	Iggy     Iggy
	LogLevel string // IGGY_KAFKA_LOG_LEVEL; "" leaves the gateway's default
	// AddrEnv names environment variables that are each set to a free loopback address of
	// their own, picked with the Kafka listener's at every start (Gateway.Addrs).
	AddrEnv []string
	// Env is added to the environment last: its entries win over the settings above.
	Env []string
	// OutputLimit is how many bytes of the gateway's output are kept (the last ones).
	OutputLimit int
}

// Gateway is a gateway binary running as a child process.
type Gateway struct {
	*Child
	Addr   string            // the Kafka listener
	Addrs  map[string]string // an address for each GatewayConfig.AddrEnv variable
	Output *Output           // what it printed
}

// SpawnGateway starts bin with its Kafka listener on addr, without waiting for it to serve.
func SpawnGateway(bin, addr string, cfg GatewayConfig) (*Gateway, error) {
	g := &Gateway{Addr: addr, Addrs: map[string]string{}, Output: NewOutput(cfg.OutputLimit)}
	env := append(baseEnv(),
		"IGGY_KAFKA_BIND_ADDR="+addr,
		"IGGY_KAFKA_BRIDGE_ENABLED=true",
		"IGGY_KAFKA_IGGY_ADDR="+cfg.Iggy.Addr,
		"IGGY_KAFKA_IGGY_USERNAME="+cfg.Iggy.Username,
		"IGGY_KAFKA_IGGY_PASSWORD="+cfg.Iggy.Password,
		"IGGY_KAFKA_IGGY_STREAM="+cfg.Iggy.Stream,
	)
	if cfg.LogLevel != "" {
		env = append(env, "IGGY_KAFKA_LOG_LEVEL="+cfg.LogLevel)
	}
	for _, name := range cfg.AddrEnv {
		a, err := FreeLoopbackAddr()
		if err != nil {
			return nil, err
		}
		g.Addrs[name] = a
		env = append(env, name+"="+a)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(env, cfg.Env...) // for a repeated name the last entry wins
	cmd.Stdout, cmd.Stderr = g.Output, g.Output
	c, err := Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("start gateway: %w", err)
	}
	g.Child = c
	return g, nil
}

// baseEnv is this process's environment without IGGY_KAFKA_* variables: the gateway refuses
// names it does not know, and a setting left in the caller's shell must not change what is
// started.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IGGY_KAFKA_") {
			env = append(env, kv)
		}
	}
	return env
}

// StartGateway starts bin on a free loopback port and waits until ready, which gets the
// running gateway, says it serves. A port picked by listening and closing can be taken before
// the gateway binds it, so it tries a few times; the error of the last try carries the
// gateway's output.
func StartGateway(ctx context.Context, bin string, cfg GatewayConfig, ready func(context.Context, *Gateway) error) (*Gateway, error) {
	var lastErr error
	for range 3 {
		addr, err := FreeLoopbackAddr()
		if err != nil {
			return nil, err
		}
		g, err := SpawnGateway(bin, addr, cfg)
		if err != nil {
			return nil, err
		}
		if lastErr = ready(ctx, g); lastErr == nil {
			return g, nil
		}
		g.Stop()
		lastErr = fmt.Errorf("%v\ngateway output:\n%s", lastErr, g.Output)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// Stop stops the gateway as an orchestrator would: SIGTERM, 30 s to drain, then SIGKILL. It
// returns the exit status.
func (g *Gateway) Stop() error { return g.Child.Stop(gatewayStopGrace) }
