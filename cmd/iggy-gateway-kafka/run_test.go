package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

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

// process is run() in a goroutine.
type process struct {
	cancel context.CancelFunc
	done   chan int
	logs   *testutil.SyncBuffer
}

func start(t *testing.T, args []string, env ...string) *process {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{cancel: cancel, done: make(chan int, 1), logs: &testutil.SyncBuffer{}}
	go func() { p.done <- run(ctx, args, env, &bytes.Buffer{}, p.logs) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			t.Error("gateway did not stop")
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s", p.logs.String())
		}
	})
	return p
}

// exitCode waits for run to return, failing after limit.
func (p *process) exitCode(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case code := <-p.done:
		p.done <- code // keep it for Cleanup
		return code
	case <-time.After(limit):
		t.Fatalf("gateway still running after %s", limit)
		return -1
	}
}

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

func admin(t *testing.T, addr string, opts ...kgo.Opt) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func bridgeEnv(kafkaAddr, iggyAddr, password string, extra ...string) []string {
	return append([]string{
		"IGGY_KAFKA_BIND_ADDR=" + kafkaAddr,
		"IGGY_KAFKA_BRIDGE_ENABLED=true",
		"IGGY_KAFKA_IGGY_ADDR=" + iggyAddr,
		"IGGY_KAFKA_IGGY_PASSWORD=" + password,
		"IGGY_KAFKA_SHUTDOWN_DRAIN_TIMEOUT=2s",
	}, extra...)
}

// startIggy starts an in-memory Iggy server on addr whose root account is iggy/password,
// closed when t ends.
func startIggy(t *testing.T, addr, password string) *memserver.Server {
	t.Helper()
	srv, err := memserver.Start(memserver.Config{Addr: addr, RootUsername: "iggy", RootPassword: password})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// dialRoot connects to the Iggy server at addr as root (iggy/iggy), closed when t ends.
func dialRoot(t *testing.T, ctx context.Context, addr string) *iggy.Client {
	t.Helper()
	c, err := iggy.Dial(ctx, iggy.Config{Addr: addr, Username: "iggy", Password: "iggy", PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Iggy starts 5 s after the gateway: the gateway keeps retrying, then serves.
func TestBridgeIggyComesUpLater(t *testing.T) {
	kafkaAddr, iggyAddr := freeAddr(t), freeAddr(t)
	p := start(t, nil, bridgeEnv(kafkaAddr, iggyAddr, "secret-pw", "IGGY_KAFKA_IGGY_CONNECT_RETRY=40s")...)
	time.Sleep(5 * time.Second)
	if c, err := net.DialTimeout("tcp", kafkaAddr, 200*time.Millisecond); err == nil {
		c.Close()
		t.Fatal("Kafka listener accepted connections before the bridge was up")
	}
	startIggy(t, iggyAddr, "secret-pw")
	waitKafka(t, kafkaAddr, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin(t, kafkaAddr).ListTopics(ctx); err != nil {
		t.Fatal(err)
	}
	logs := p.logs.String()
	if !strings.Contains(logs, "Iggy not reachable yet, retrying") || !strings.Contains(logs, "connected to Iggy") {
		t.Errorf("retry not logged:\n%s", logs)
	}
	if strings.Contains(logs, "secret-pw") {
		t.Error("password logged")
	}
	p.cancel()
	if code := p.exitCode(t, 10*time.Second); code != exitOK {
		t.Fatalf("exit code %d after shutdown", code)
	}
}

// A wrong password stops startup at once, without waiting for the retry window.
func TestBridgeWrongPassword(t *testing.T) {
	srv := startIggy(t, "127.0.0.1:0", "right-pw")
	p := start(t, nil, bridgeEnv(freeAddr(t), srv.Addr(), "wrong-pw", "IGGY_KAFKA_IGGY_CONNECT_RETRY=10m")...)
	if code := p.exitCode(t, 30*time.Second); code != exitFailure {
		t.Fatalf("exit code %d", code)
	}
	logs := p.logs.String()
	if !strings.Contains(logs, "rejected the bridge account") || strings.Contains(logs, "retrying") {
		t.Errorf("log:\n%s", logs)
	}
	if strings.Contains(logs, "wrong-pw") {
		t.Error("password logged")
	}
}

// Nobody listens: startup fails once the (shortened) retry window is over.
func TestBridgeIggyNeverComesUp(t *testing.T) {
	p := start(t, nil, bridgeEnv(freeAddr(t), freeAddr(t), "pw", "IGGY_KAFKA_IGGY_CONNECT_RETRY=2s")...)
	if code := p.exitCode(t, 30*time.Second); code != exitFailure {
		t.Fatalf("exit code %d", code)
	}
	if logs := p.logs.String(); !strings.Contains(logs, "not reachable after 2s") {
		t.Errorf("log:\n%s", logs)
	}
}

// A bridge account that may only read stops startup with a clear error when the gateway needs
// to create something: the default stream when it is missing, or else the coordinator log of
// committed offsets (the gateway never runs without a place to keep commits).
func TestBridgeAccountMayOnlyRead(t *testing.T) {
	for _, tt := range []struct {
		name       string
		haveStream bool // the default stream exists
		wantLogs   []string
	}{
		{"default stream missing", false, []string{"may not create it"}},
		{"coordinator log missing", true, []string{"loading committed offsets from Iggy stream", "needs permission"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startIggy(t, "127.0.0.1:0", "iggy")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			root := dialRoot(t, ctx, srv.Addr())
			if tt.haveStream {
				if _, err := root.CreateStream(ctx, "kafka"); err != nil {
					t.Fatal(err)
				}
			}
			perms := &iggy.Permissions{Global: iggy.GlobalPermissions{ReadStreams: true, ReadTopics: true}}
			if _, err := root.CreateUser(ctx, "reader", "reader-pw", iggy.UserActive, perms); err != nil {
				t.Fatal(err)
			}
			p := start(t, nil, bridgeEnv(freeAddr(t), srv.Addr(), "reader-pw", "IGGY_KAFKA_IGGY_USERNAME=reader")...)
			if code := p.exitCode(t, 30*time.Second); code != exitFailure {
				t.Fatalf("exit code %d", code)
			}
			logs := p.logs.String()
			for _, want := range tt.wantLogs {
				if !strings.Contains(logs, want) {
					t.Errorf("log lacks %q:\n%s", want, logs)
				}
			}
		})
	}
}

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

// Dev mode: one command gives a gateway bridged to an in-memory Iggy that native Iggy clients
// can reach at the printed address.
func TestDevMode(t *testing.T) {
	kafkaAddr, iggyAddr := freeAddr(t), freeAddr(t)
	p := start(t, []string{"--dev", "--dev-iggy-addr=" + iggyAddr, "--bind-addr=" + kafkaAddr, "--auto-create-topics-enabled"})
	waitKafka(t, kafkaAddr, 20*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := admin(t, kafkaAddr, kgo.AllowAutoTopicCreation()).Metadata(ctx, "dev-topic")
	if err != nil || md.Topics["dev-topic"].Err != nil {
		t.Fatalf("%v %v", err, md.Topics["dev-topic"].Err)
	}
	if _, err := dialRoot(t, ctx, iggyAddr).GetTopic(ctx, iggy.Name("kafka"), iggy.Name("dev-topic")); err != nil {
		t.Fatalf("native client cannot see the auto-created topic: %v", err)
	}
	logs := p.logs.String()
	if !strings.Contains(logs, "DEV MODE: data lives in memory only") || !strings.Contains(logs, "iggy_addr="+iggyAddr) {
		t.Errorf("dev mode not announced:\n%s", logs)
	}
}

// The compiled binary exits 0 on SIGTERM after draining, and non-zero on a bad password.
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
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitKafka(t, kafkaAddr, 20*time.Second)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "signal received, shutting down") {
		t.Errorf("log:\n%s", logs.String())
	}

	srv := startIggy(t, "127.0.0.1:0", "iggy")
	bad := exec.Command(bin)
	bad.Env = append(os.Environ(), bridgeEnv(freeAddr(t), srv.Addr(), "nope")...)
	out, err := bad.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFailure {
		t.Fatalf("bad password: %v\n%s", err, out)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// Liveness answers while startup waits for Iggy; readiness only once Kafka clients are served;
// metrics count the requests.
func TestMetricsAndHealth(t *testing.T) {
	kafkaAddr, iggyAddr, metricsAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	start(t, nil, bridgeEnv(kafkaAddr, iggyAddr, "metrics-pw", "IGGY_KAFKA_METRICS_ADDR="+metricsAddr, "IGGY_KAFKA_IGGY_CONNECT_RETRY=30s")...)
	base := "http://" + metricsAddr
	waitFor(t, func() bool { code, _ := httpGet(t, base+"/healthz"); return code == 200 })
	if code, body := httpGet(t, base+"/readyz"); code != 503 {
		t.Fatalf("readyz before Iggy: %d %s", code, body)
	}
	startIggy(t, iggyAddr, "metrics-pw")
	waitKafka(t, kafkaAddr, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin(t, kafkaAddr).ListTopics(ctx); err != nil {
		t.Fatal(err)
	}
	if code, body := httpGet(t, base+"/readyz"); code != 200 {
		t.Fatalf("readyz: %d %s", code, body)
	}
	// A request is counted once its response is written, which can be just after the client
	// has read it: wait for the count rather than read it once.
	wants := []string{`api="Metadata",listener="PLAINTEXT",outcome="answered"`, "iggy_gateway_kafka_connections_total"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := httpGet(t, base+"/metrics")
		missing := slices.DeleteFunc(slices.Clone(wants), func(w string) bool { return strings.Contains(body, w) })
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics lack %q", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
