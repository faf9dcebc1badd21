package metrics

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestMetricsExposition(t *testing.T) {
	m := New()
	m.ConnOpened("PLAINTEXT")
	m.ConnOpened("PLAINTEXT")
	m.ConnClosed("PLAINTEXT")
	m.ConnRefused("PLAINTEXT")
	m.RequestRead("PLAINTEXT", 100)
	m.RequestDone("PLAINTEXT", 3, 5*time.Millisecond, 40, listener.Answered)
	m.RequestRead("PLAINTEXT", 10)
	m.RequestDone("PLAINTEXT", 12345, 0, 0, listener.Rejected)
	code, body := get(t, m.Handler(func(context.Context) error { return nil }), "/metrics")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{
		`iggy_gateway_kafka_connections_open{listener="PLAINTEXT"} 1`,
		`iggy_gateway_kafka_connections_total{listener="PLAINTEXT"} 2`,
		`iggy_gateway_kafka_connections_refused_total{listener="PLAINTEXT"} 1`,
		`iggy_gateway_kafka_requests_in_flight 0`,
		`iggy_gateway_kafka_requests_total{api="Metadata",listener="PLAINTEXT",outcome="answered"} 1`,
		`iggy_gateway_kafka_requests_total{api="unsupported",listener="PLAINTEXT",outcome="rejected"} 1`,
		`iggy_gateway_kafka_request_duration_seconds_count{api="Metadata",listener="PLAINTEXT"} 1`,
		`iggy_gateway_kafka_request_bytes_total{listener="PLAINTEXT"} 110`,
		`iggy_gateway_kafka_response_bytes_total{listener="PLAINTEXT"} 40`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %q", want)
		}
	}
}

func TestHealthAndReadiness(t *testing.T) {
	m := New()
	var readyErr error
	h := m.Handler(func(context.Context) error { return readyErr })
	if code, _ := get(t, h, "/healthz"); code != 200 {
		t.Errorf("healthz %d", code)
	}
	if code, _ := get(t, h, "/readyz"); code != 200 {
		t.Errorf("readyz %d", code)
	}
	readyErr = errors.New("iggy unreachable")
	if code, body := get(t, h, "/readyz"); code != 503 || !strings.Contains(body, "iggy unreachable") {
		t.Errorf("readyz %d %q", code, body)
	}
}

func TestIggyPrimaryAndFailovers(t *testing.T) {
	m := New()
	h := m.Handler(func(context.Context) error { return nil })
	steps := []struct {
		from, to  string
		resume    time.Duration
		want      []string
		wantNot   []string
		failovers string
	}{
		{"", "10.0.0.1:8090", 0, []string{`iggy_gateway_kafka_iggy_primary_info{addr="10.0.0.1:8090"} 1`}, nil, "0"},
		{"10.0.0.1:8090", "10.0.0.2:8090", 3 * time.Second,
			[]string{`iggy_gateway_kafka_iggy_primary_info{addr="10.0.0.2:8090"} 1`, `iggy_gateway_kafka_iggy_failover_resume_seconds_bucket{le="3.2"} 1`},
			[]string{`addr="10.0.0.1:8090"`}, "1"},
		// A move the roster announced: a failover without a time without primary.
		{"10.0.0.2:8090", "10.0.0.3:8090", 0, []string{`iggy_gateway_kafka_iggy_failover_resume_seconds_count 1`}, []string{`addr="10.0.0.2:8090"`}, "2"},
	}
	for i, s := range steps {
		m.PrimaryChanged(s.from, s.to, s.resume)
		_, body := get(t, h, "/metrics")
		for _, w := range append(s.want, "iggy_gateway_kafka_iggy_failovers_total "+s.failovers) {
			if !strings.Contains(body, w) {
				t.Errorf("step %d: missing %q", i, w)
			}
		}
		for _, w := range s.wantNot {
			if strings.Contains(body, w) {
				t.Errorf("step %d: still exposes %q", i, w)
			}
		}
	}
}

// Panics recovered by supervised goroutines are exported by component.
func TestPanicsExported(t *testing.T) {
	m := New()
	var wg sync.WaitGroup
	supervise.Go(&wg, slog.New(slog.DiscardHandler), "metrics_test", func() { panic("boom") }, nil)
	wg.Wait()
	_, body := get(t, m.Handler(func(context.Context) error { return nil }), "/metrics")
	if !strings.Contains(body, `iggy_gateway_kafka_panics_total{component="metrics_test"} 1`) {
		t.Errorf("no panic counted:\n%s", body)
	}
}
