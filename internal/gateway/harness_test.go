package gateway

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// starting is a gateway whose Start runs in a goroutine (it may wait for Iggy).
type starting struct {
	cancel context.CancelFunc
	done   chan struct{}
	g      *Gateway
	err    error
	logs   *testutil.SyncBuffer
}

// begin starts a gateway from args and env (IGGY_KAFKA_* settings) on a free loopback port;
// the gateway is stopped when t ends.
func begin(t *testing.T, args []string, env ...string) *starting {
	t.Helper()
	env = append([]string{"IGGY_KAFKA_BIND_ADDR=127.0.0.1:0", "IGGY_KAFKA_SHUTDOWN_DRAIN_TIMEOUT=2s"}, env...)
	cfg, err := config.Load(args, env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &starting{cancel: cancel, done: make(chan struct{}), logs: &testutil.SyncBuffer{}}
	log := slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	go func() {
		defer close(s.done)
		s.g, s.err = Start(ctx, cfg, log)
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
		if s.g != nil {
			s.g.Stop()
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s", s.logs.String())
		}
	})
	return s
}

// started waits for Start to return.
func (s *starting) started(t *testing.T) (*Gateway, error) {
	t.Helper()
	select {
	case <-s.done:
		return s.g, s.err
	case <-time.After(60 * time.Second):
		t.Fatal("gateway startup did not end within a minute")
		return nil, nil
	}
}

// start starts a gateway and fails t unless it comes up.
func start(t *testing.T, args []string, env ...string) (*Gateway, *starting) {
	t.Helper()
	s := begin(t, args, env...)
	g, err := s.started(t)
	if err != nil {
		t.Fatalf("startup: %v", err)
	}
	return g, s
}

// kafkaAddr is the address of the single listener the test configurations have.
func (g *Gateway) kafkaAddr() string { return g.Addr("PLAINTEXT") }

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

func kafkaClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func admin(t *testing.T, addr string, opts ...kgo.Opt) *kadm.Client {
	return kadm.NewClient(kafkaClient(t, addr, opts...))
}

func bridgeEnv(iggyAddr, password string, extra ...string) []string {
	return append([]string{
		"IGGY_KAFKA_BRIDGE_ENABLED=true",
		"IGGY_KAFKA_IGGY_ADDR=" + iggyAddr,
		"IGGY_KAFKA_IGGY_PASSWORD=" + password,
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

// testIggy is the Iggy server of tests that any server will do for: the real one named by
// IGGY_TEST_ADDR (IGGY_TEST_USERNAME, IGGY_TEST_PASSWORD), else an in-memory one.
func testIggy(t *testing.T) (addr, username, password string) {
	t.Helper()
	if addr := os.Getenv("IGGY_TEST_ADDR"); addr != "" {
		t.Logf("iggy backend: real at %s", addr)
		return addr, envOr("IGGY_TEST_USERNAME", "iggy"), envOr("IGGY_TEST_PASSWORD", "iggy")
	}
	srv := startIggy(t, "127.0.0.1:0", "iggy")
	t.Logf("iggy backend: memserver at %s", srv.Addr())
	return srv.Addr(), "iggy", "iggy"
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// dialRoot connects to the Iggy server at addr as root (iggy/iggy), closed when t ends.
func dialRoot(t *testing.T, ctx context.Context, addr string) *iggy.Client {
	t.Helper()
	c, err := iggy.Dial(ctx, iggy.Config{Addr: addr, Username: "iggy", Password: "iggy", PoolSize: 1, PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// httpGet fetches url on a connection of its own (none is left open for the leak check).
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitFor polls cond until it holds, failing t after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within 20 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
