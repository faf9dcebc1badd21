package gateway

import (
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// Iggy starts after the gateway: the gateway keeps retrying without serving Kafka, then
// serves.
func TestBridgeIggyComesUpLater(t *testing.T) {
	iggyAddr := freeAddr(t)
	s := begin(t, nil, bridgeEnv(iggyAddr, "secret-pw", "IGGY_KAFKA_IGGY_CONNECT_RETRY=40s")...)
	waitFor(t, "a retry", func() bool { return strings.Contains(s.logs.String(), "Iggy not reachable yet, retrying") })
	select {
	case <-s.done:
		t.Fatalf("startup ended while Iggy was down: %v", s.err)
	default:
	}
	startIggy(t, iggyAddr, "secret-pw")
	g, err := s.started(t)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin(t, g.kafkaAddr()).ListTopics(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	logs := s.logs.String()
	if !strings.Contains(logs, "connected to Iggy") {
		t.Errorf("connection not logged:\n%s", logs)
	}
	if strings.Contains(logs, "secret-pw") {
		t.Error("password logged")
	}
}

// A wrong password stops startup at once, without waiting for the retry window.
func TestBridgeWrongPassword(t *testing.T) {
	srv := startIggy(t, "127.0.0.1:0", "right-pw")
	s := begin(t, nil, bridgeEnv(srv.Addr(), "wrong-pw", "IGGY_KAFKA_IGGY_CONNECT_RETRY=10m")...)
	_, err := s.started(t)
	if err == nil || !strings.Contains(err.Error(), "rejected by Iggy") || strings.Contains(err.Error(), "wrong-pw") {
		t.Fatalf("startup error: %v", err)
	}
	if logs := s.logs.String(); strings.Contains(logs, "retrying") || strings.Contains(logs, "wrong-pw") {
		t.Errorf("log:\n%s", logs)
	}
}

// Nobody listens: startup fails once the (shortened) retry window is over.
func TestBridgeIggyNeverComesUp(t *testing.T) {
	s := begin(t, nil, bridgeEnv(freeAddr(t), "pw", "IGGY_KAFKA_IGGY_CONNECT_RETRY=2s")...)
	if _, err := s.started(t); err == nil || !strings.Contains(err.Error(), "not reachable after 2s") {
		t.Fatalf("startup error: %v", err)
	}
}

// A bridge account that may only read stops startup with a clear error when the gateway needs
// to create something: the default stream when it is missing, or else the coordinator log of
// committed offsets (the gateway never runs without a place to keep commits).
func TestBridgeAccountMayOnlyRead(t *testing.T) {
	for _, tt := range []struct {
		name       string
		haveStream bool // the default stream exists
		wantErr    []string
	}{
		{"default stream missing", false, []string{"may not create it"}},
		{"coordinator log missing", true, []string{"loading committed offsets from Iggy stream", "needs permission"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startIggy(t, "127.0.0.1:0", "iggy")
			ctx := testCtx(t)
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
			s := begin(t, nil, bridgeEnv(srv.Addr(), "reader-pw", "IGGY_KAFKA_IGGY_USERNAME=reader")...)
			_, err := s.started(t)
			for _, want := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("startup error %v lacks %q", err, want)
				}
			}
		})
	}
}

// Dev mode: one setting gives a gateway bridged to an in-memory Iggy that native Iggy clients
// can reach at the announced address.
func TestDevMode(t *testing.T) {
	g, s := start(t, []string{"--dev", "--dev-iggy-addr=127.0.0.1:0", "--auto-create-topics-enabled"})
	ctx := testCtx(t)
	md, err := admin(t, g.kafkaAddr(), kgo.AllowAutoTopicCreation()).Metadata(ctx, "dev-topic")
	if err != nil || md.Topics["dev-topic"].Err != nil {
		t.Fatalf("%v %v", err, md.Topics["dev-topic"].Err)
	}
	iggyAddr := g.cfg.Bridge.Addr
	if _, err := dialRoot(t, ctx, iggyAddr).GetTopic(ctx, iggy.Name("kafka"), iggy.Name("dev-topic")); err != nil {
		t.Fatalf("native client cannot see the auto-created topic: %v", err)
	}
	logs := s.logs.String()
	if !strings.Contains(logs, "DEV MODE: data lives in memory only") || !strings.Contains(logs, "iggy_addr="+iggyAddr) {
		t.Errorf("dev mode not announced:\n%s", logs)
	}
}

// Liveness answers while startup waits for Iggy; readiness only once Kafka clients are served;
// metrics count the requests.
func TestMetricsAndHealth(t *testing.T) {
	iggyAddr, metricsAddr := freeAddr(t), freeAddr(t)
	s := begin(t, nil, bridgeEnv(iggyAddr, "metrics-pw", "IGGY_KAFKA_METRICS_ADDR="+metricsAddr, "IGGY_KAFKA_IGGY_CONNECT_RETRY=30s")...)
	base := "http://" + metricsAddr
	waitFor(t, "liveness", func() bool { code, _ := httpGet(t, base+"/healthz"); return code == 200 })
	if code, body := httpGet(t, base+"/readyz"); code != 503 {
		t.Fatalf("readyz before Iggy: %d %s", code, body)
	}
	startIggy(t, iggyAddr, "metrics-pw")
	g, err := s.started(t)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin(t, g.kafkaAddr()).ListTopics(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if code, body := httpGet(t, base+"/readyz"); code != 200 {
		t.Fatalf("readyz: %d %s", code, body)
	}
	// An idempotent producer (franz-go's default) is counted in the producer-state gauges.
	if _, err := admin(t, g.kafkaAddr()).CreateTopic(testCtx(t), 1, 1, nil, "metered"); err != nil {
		t.Fatal(err)
	}
	if err := kafkaClient(t, g.kafkaAddr()).ProduceSync(testCtx(t), &kgo.Record{Topic: "metered", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitMetrics(t, g, `api="Metadata",listener="PLAINTEXT",outcome="answered"`, "iggy_gateway_kafka_connections_total",
		"iggy_gateway_kafka_idempotent_producers 1\n", "iggy_gateway_kafka_idempotent_producers_bytes ")
}

// waitMetrics waits until /metrics shows every one of wants. A request is counted once its
// response is written, which can be just after the client has read it.
func waitMetrics(t *testing.T, g *Gateway, wants ...string) {
	t.Helper()
	var missing []string
	waitFor(t, "metrics", func() bool {
		_, body := httpGet(t, "http://"+g.MetricsAddr()+"/metrics")
		missing = slices.DeleteFunc(slices.Clone(wants), func(w string) bool { return strings.Contains(body, w) })
		return len(missing) == 0
	})
}

// Stop closes the listeners, and a second Stop is harmless.
func TestStopTwice(t *testing.T) {
	g, _ := start(t, nil)
	g.Stop()
	g.Stop()
	if c, err := net.Dial("tcp", g.kafkaAddr()); err == nil {
		c.Close()
		t.Fatal("a stopped gateway still accepts connections")
	}
}

// A start that fails after the broker was built (here: the Kafka address is taken) stops the
// broker's background work too: no goroutine of it outlives the failed start.
func TestFailedStartStopsTheBroker(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	opts := []goleak.Option{goleak.IgnoreCurrent()}
	s := begin(t, nil, "IGGY_KAFKA_BIND_ADDR="+taken.Addr().String())
	if _, err := s.started(t); err == nil {
		t.Fatal("started on a taken address")
	}
	if err := goleak.Find(opts...); err != nil {
		t.Fatalf("goroutines left by the failed start: %v", err)
	}
}
