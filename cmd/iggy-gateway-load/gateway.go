package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggygw/iggy-gateway-kafka/cmd/iggy-gateway-load/pprofhook"
	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
)

// hookImportPath is the import path of package pprofhook, which a profiling build links in.
const hookImportPath = "github.com/iggygw/iggy-gateway-kafka/cmd/iggy-gateway-load/pprofhook"

// buildGateway compiles the gateway into dir. With hook, package pprofhook is linked in
// through a build overlay that adds one importing file to the gateway's main package; the
// sources on disk are not changed. The build has no race detector: it is what is measured.
func buildGateway(ctx context.Context, dir string, hook bool) (string, error) {
	root, err := childproc.RepoRoot()
	if err != nil {
		return "", fmt.Errorf("%w: run from the repository or pass --gateway-bin", err)
	}
	var flags []string
	if hook {
		overlay, err := writeHookOverlay(root, dir)
		if err != nil {
			return "", err
		}
		flags = append(flags, "-overlay", overlay)
	}
	return childproc.BuildGateway(ctx, root, dir, flags...)
}

// writeHookOverlay writes the file that imports pprofhook and the overlay that places it in
// the gateway's package directory, and returns the overlay's path.
func writeHookOverlay(root, dir string) (string, error) {
	src := filepath.Join(dir, "pprofhook_import.go")
	code := "package main\n\nimport _ \"" + hookImportPath + "\"\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		return "", err
	}
	target := filepath.Join(root, childproc.GatewayPackage, "zz_load_pprofhook.go")
	overlay := filepath.Join(dir, "overlay.json")
	body := fmt.Sprintf(`{"Replace": {%q: %q}}`, target, src)
	return overlay, os.WriteFile(overlay, []byte(body), 0o644)
}

// startGateway starts bin bridged to iggy on a free loopback port, logging warnings only,
// with extraEnv added, and waits until it answers. With hook, the profiling endpoint gets a
// free loopback port of its own (Addrs[pprofhook.EnvAddr]).
func startGateway(ctx context.Context, bin string, iggy childproc.Iggy, hook bool, extraEnv []string) (*childproc.Gateway, error) {
	cfg := childproc.GatewayConfig{Iggy: iggy, LogLevel: "warn", Env: extraEnv, OutputLimit: 64 << 10}
	if hook {
		cfg.AddrEnv = []string{pprofhook.EnvAddr}
	} else {
		// An address left in the shell must not turn on a hook linked into --gateway-bin;
		// --gateway-env, which comes later, may still set one.
		cfg.Env = append([]string{pprofhook.EnvAddr + "="}, extraEnv...)
	}
	return childproc.StartGateway(ctx, bin, cfg, gatewayReady)
}

// gatewayReady waits until the gateway answers ApiVersions, or exits, or a minute passes.
func gatewayReady(ctx context.Context, g *childproc.Gateway) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := waitKafka(ctx, g.Addr, g.Done()); err != nil {
		if dead, exitErr := g.Exited(); dead {
			return fmt.Errorf("gateway exited before it was ready: %v", exitErr)
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
