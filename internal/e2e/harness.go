package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// kafkaStream is the Iggy stream the harness's gateways map Kafka topics to.
const kafkaStream = "kafka"

// Env is a Kafka endpoint that scenarios run against: a gateway started by the harness, or an
// external endpoint named by IGGYGW_E2E_BOOTSTRAP.
type Env struct {
	// Bootstrap is the host:port clients are given (host:port,host:port,... for several
	// gateways).
	Bootstrap string
	// APIVersions is the gateway's answer to the harness's ApiVersions probe.
	APIVersions *kmsg.ApiVersionsResponse

	gateway *childproc.Gateway // nil for an external endpoint
	iggy    *iggyBackend       // nil for an external endpoint
}

// External reports whether the endpoint is not a gateway started by the harness.
func (e *Env) External() bool { return e.gateway == nil }

// Port is the port of Bootstrap.
func (e *Env) Port() int {
	_, p, _ := net.SplitHostPort(e.Bootstrap)
	n, _ := strconv.Atoi(p)
	return n
}

// shared is the environment every scenario uses unless it needs a gateway of its own. It is
// started by the first scenario that runs and stopped by TestMain.
var shared struct {
	once sync.Once
	env  *Env
	err  error
}

// gatewayBuild is the gateway binary, built once per test run.
var gatewayBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// sharedEnv returns the shared environment, starting it on first use. Gateway output printed
// while t runs is dumped if t fails.
func sharedEnv(t testing.TB) *Env {
	t.Helper()
	shared.once.Do(func() { shared.env, shared.err = startSharedEnv() })
	if shared.err != nil {
		t.Fatalf("e2e environment: %v", shared.err)
	}
	shared.env.watch(t)
	return shared.env
}

func startSharedEnv() (*Env, error) {
	if addr := os.Getenv("IGGYGW_E2E_BOOTSTRAP"); addr != "" {
		versions, err := probeAPIVersions(addr, 10*time.Second)
		if err != nil {
			return nil, fmt.Errorf("IGGYGW_E2E_BOOTSTRAP=%s: %w", addr, err)
		}
		fmt.Printf("e2e: running against external Kafka endpoint %s (IGGYGW_E2E_BOOTSTRAP)\n", addr)
		return &Env{Bootstrap: addr, APIVersions: versions}, nil
	}
	backend, err := startIggyBackend()
	if err != nil {
		return nil, err
	}
	fmt.Printf("e2e: Iggy backend: %s\n", backend.describe())
	env, err := startGatewayEnv(backend)
	if err != nil {
		backend.close()
		return nil, err
	}
	fmt.Printf("e2e: gateway listening on %s\n", env.Bootstrap)
	return env, nil
}

// startGatewayEnv builds the gateway if needed and starts one bridged to backend.
func startGatewayEnv(backend *iggyBackend, extraEnv ...string) (*Env, error) {
	return startGatewayEnvTLS(backend, nil, extraEnv...)
}

// startGatewayEnvTLS is startGatewayEnv for a gateway whose listener uses TLS; the readiness
// probe connects with tlsCfg (nil: plaintext).
func startGatewayEnvTLS(backend *iggyBackend, tlsCfg *tls.Config, extraEnv ...string) (*Env, error) {
	bin, err := buildGateway()
	if err != nil {
		return nil, err
	}
	g, versions, err := startGatewayTLS(bin, backend.target, tlsCfg, extraEnv...)
	if err != nil {
		return nil, err
	}
	return &Env{Bootstrap: g.Addr, APIVersions: versions, gateway: g, iggy: backend}, nil
}

// buildGateway builds the gateway binary (with the race detector) on first use and returns
// its path.
func buildGateway() (string, error) {
	gatewayBuild.once.Do(func() {
		root, err := childproc.RepoRoot()
		if err != nil {
			gatewayBuild.err = err
			return
		}
		gatewayBuild.dir, err = os.MkdirTemp("", "iggygw-e2e-")
		if err != nil {
			gatewayBuild.err = err
			return
		}
		start := time.Now()
		gatewayBuild.bin, gatewayBuild.err = childproc.BuildGateway(context.Background(), root, gatewayBuild.dir, "-race")
		if gatewayBuild.err == nil {
			fmt.Printf("e2e: built gateway in %s\n", time.Since(start).Round(time.Millisecond))
		}
	})
	return gatewayBuild.bin, gatewayBuild.err
}

// startOwnGateway starts a second gateway on the shared Iggy backend with extra IGGY_KAFKA_*
// settings, for scenarios that need a configuration the shared gateway does not have. It is
// stopped when t ends.
func startOwnGateway(t testing.TB, extraEnv ...string) *Env {
	t.Helper()
	return startOwnGatewayTLS(t, nil, extraEnv...)
}

// startOwnGatewayTLS is startOwnGateway for a gateway whose listener uses TLS; the readiness
// probe connects with tlsCfg (nil: plaintext).
func startOwnGatewayTLS(t testing.TB, tlsCfg *tls.Config, extraEnv ...string) *Env {
	t.Helper()
	base := sharedEnv(t)
	if base.External() {
		t.Skip("needs a gateway started by the harness (IGGYGW_E2E_BOOTSTRAP is set)")
	}
	env, err := startGatewayEnvTLS(base.iggy, tlsCfg, extraEnv...)
	if err != nil {
		t.Fatalf("start gateway with %v: %v", extraEnv, err)
	}
	// Cleanups run last-in first-out: register the stop first so that watch, which fails t
	// if the gateway has exited, runs while it is still up.
	t.Cleanup(func() {
		if err := env.gateway.Stop(); err != nil {
			t.Errorf("gateway with %v exited with %v\n%s", extraEnv, err, indent(env.gateway.Output.String()))
		}
		if races := raceReports(env.gateway.Output); races != "" {
			t.Errorf("data race in the gateway:\n%s", races)
		}
	})
	env.watch(t)
	return env
}

// watch dumps the gateway output printed while t ran if t fails, and fails t if the gateway
// died under it.
func (e *Env) watch(t testing.TB) {
	if e.gateway == nil {
		return
	}
	mark := e.gateway.Output.Mark()
	t.Cleanup(func() {
		if dead, err := e.gateway.Exited(); dead {
			t.Errorf("the gateway exited during the test: %v", err)
		}
		if t.Failed() {
			t.Logf("gateway output during this test:\n%s", indent(e.gateway.Output.Since(mark)))
		}
	})
}

// stopShared stops the shared gateway and Iggy backend. It returns a description of anything
// that went wrong (a gateway that exited badly or reported a data race), "" if nothing did.
func stopShared() string {
	var problems []string
	if env := shared.env; env != nil && env.gateway != nil {
		if err := env.gateway.Stop(); err != nil {
			problems = append(problems, fmt.Sprintf("gateway exited with %v; output:\n%s", err, indent(env.gateway.Output.String())))
		}
		if races := raceReports(env.gateway.Output); races != "" {
			problems = append(problems, "data race in the gateway:\n"+races)
		}
		env.iggy.close()
	}
	if gatewayBuild.dir != "" {
		os.RemoveAll(gatewayBuild.dir)
	}
	return strings.Join(problems, "\n")
}

var topicSeq atomic.Int64

// TopicName returns a topic name unique to this run, derived from the test's name.
func TopicName(t testing.TB) string {
	name := strings.ToLower(t.Name())
	name = strings.TrimPrefix(name, "test")
	var b strings.Builder
	b.WriteString("e2e-")
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) > 180 {
		s = s[:180]
	}
	return fmt.Sprintf("%s-%d-%d", s, os.Getpid()%10000, topicSeq.Add(1))
}

// CreateTopic creates a topic with a unique name and the given partition count, without going
// through the Kafka API: natively in Iggy (the stream the gateway maps to) for a harness
// gateway, with the Kafka admin API for an external endpoint. Metadata-level scenarios use it
// so they do not depend on CreateTopics.
func (e *Env) CreateTopic(t testing.TB, partitions int) string {
	t.Helper()
	name := TopicName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if e.iggy != nil {
		if err := e.iggy.createTopic(ctx, name, partitions); err != nil {
			t.Fatalf("create Iggy topic %s/%s: %v", kafkaStream, name, err)
		}
		e.iggy.leaveNothing(t, "topic "+name, func(ctx context.Context, c *iggy.Client) error {
			return c.DeleteTopic(ctx, iggy.Name(kafkaStream), iggy.Name(name))
		})
		return name
	}
	adm := e.Admin(t)
	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
	// Kafka brokers learn about new topics asynchronously; wait until every partition has a
	// leader so that scenarios see what they would see on a gateway at once.
	deadline := time.Now().Add(20 * time.Second)
	for {
		md, err := adm.Metadata(ctx, name)
		if err == nil && md.Topics[name].Err == nil && len(md.Topics[name].Partitions) == partitions {
			return name
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s not in metadata 20 s after creation: %v", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Kgo returns a franz-go client for the endpoint with opts added, closed when t ends. Records
// and requests fail after bounded retries instead of being retried forever (franz-go's
// default), so a gateway that keeps failing fails the scenario instead of hanging it. (A
// record delivery timeout would not do: franz-go counts it from the record's timestamp, and
// scenarios produce records with timestamps in the past.)
func (e *Env) Kgo(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(e.Bootstrap, ",")...),
		kgo.RecordRetries(20), kgo.RetryTimeout(30 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatalf("kgo client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Admin returns a kadm client for the endpoint, closed when t ends.
func (e *Env) Admin(t testing.TB) *kadm.Client {
	t.Helper()
	return kadm.NewClient(e.Kgo(t))
}
