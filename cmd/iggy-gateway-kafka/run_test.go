package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// The gateway's behaviour is tested in package internal/gateway; these tests cover what main
// adds: configuration errors, exit codes and signals.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConfigErrorsExitWithUsageCode(t *testing.T) {
	var stderr bytes.Buffer
	code := run(context.Background(), nil, []string{"IGGY_KAFKA_BIND_ADRR=127.0.0.1:1"}, &bytes.Buffer{}, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "IGGY_KAFKA_BIND_ADRR") {
		t.Fatalf("code %d, stderr %q", code, stderr.String())
	}
	var stdout bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, nil, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "IGGY_KAFKA_BIND_ADDR") {
		t.Fatalf("--help: code %d", code)
	}
}

// A signal during startup (here: while Iggy is unreachable) ends the process cleanly.
func TestSignalDuringStartupExitsOK(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	logs := &testutil.SyncBuffer{}
	env := []string{"IGGY_KAFKA_BIND_ADDR=127.0.0.1:0", "IGGY_KAFKA_BRIDGE_ENABLED=true",
		"IGGY_KAFKA_IGGY_ADDR=" + freeAddr(t), "IGGY_KAFKA_IGGY_PASSWORD=pw"}
	done := make(chan int, 1)
	go func() { done <- run(ctx, nil, env, &bytes.Buffer{}, logs) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "retrying") {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("no retry logged:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != exitOK || !strings.Contains(logs.String(), "startup interrupted by signal") {
		t.Fatalf("exit code %d, log:\n%s", code, logs.String())
	}
}

// The compiled binary exits 0 on SIGTERM after draining, and 1 on a bad password.
func TestBinarySignalsAndExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "iggy-gateway-kafka")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	kafkaAddr := freeAddr(t)
	cmd := exec.Command(bin, "--dev", "--dev-iggy-addr=127.0.0.1:0", "--bind-addr="+kafkaAddr)
	var logs testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.Env = withoutGOMEMLIMIT(os.Environ())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitKafka(t, kafkaAddr, 20*time.Second)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
	}
	// No cgroup needed: the soft limit comes from the settings (or 90% of a smaller cgroup
	// limit, when the test runs in a small container).
	logged := logs.String()
	for _, want := range []string{"signal received, shutting down", "Go runtime memory limit set"} {
		if !strings.Contains(logged, want) {
			t.Errorf("no %q in the log:\n%s", want, logged)
		}
	}
	if !strings.Contains(logged, `from="settings: MAX_REQUEST_MEMORY`) && !strings.Contains(logged, `from="90% of the cgroup limit`) {
		t.Errorf("the memory limit's origin is not logged:\n%s", logged)
	}

	srv, err := memserver.Start(memserver.Config{Addr: "127.0.0.1:0", RootUsername: "iggy", RootPassword: "iggy"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	bad := exec.Command(bin)
	bad.Env = append(os.Environ(), "IGGY_KAFKA_BIND_ADDR="+freeAddr(t), "IGGY_KAFKA_BRIDGE_ENABLED=true",
		"IGGY_KAFKA_IGGY_ADDR="+srv.Addr(), "IGGY_KAFKA_IGGY_PASSWORD=nope")
	out, err := bad.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFailure {
		t.Fatalf("bad password: %v\n%s", err, out)
	}
}

func withoutGOMEMLIMIT(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			out = append(out, kv)
		}
	}
	return out
}

// freeAddr reserves a loopback port and releases it for the code under test.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitKafka waits until something accepts connections on addr.
func waitKafka(t *testing.T, addr string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Kafka listener %s not up after %s", addr, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
