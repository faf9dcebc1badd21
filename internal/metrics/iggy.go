package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// iggyMetrics are the bridge's round trips to Iggy.
type iggyMetrics struct {
	duration *prometheus.HistogramVec
	calls    *prometheus.CounterVec
	rejected prometheus.Counter
}

func newIggyMetrics(m *Metrics) iggyMetrics {
	return iggyMetrics{
		duration: m.histogramVec("iggy_request_duration_seconds", "Time of an Iggy command, from taking a pooled connection to its reply.",
			prometheus.ExponentialBuckets(0.0001, 4, 10), "command"),
		calls:    m.counterVec("iggy_requests_total", "Iggy commands by outcome (ok, rejected, connection, timeout, cancelled).", "command", "outcome"),
		rejected: m.counter("iggy_login_rejections_total", "Logins of the bridge account that Iggy refused (wrong credentials, inactive user): no retry helps until the account or Iggy changes."),
	}
}

var _ iggy.Observer = (*Metrics)(nil)

// CommandDone records one Iggy command (iggy.Observer).
func (m *Metrics) CommandDone(command string, d time.Duration, outcome iggy.Outcome) {
	m.iggy.duration.WithLabelValues(command).Observe(d.Seconds())
	m.iggy.calls.WithLabelValues(command, string(outcome)).Inc()
}

// LoginRejected counts a refused login (iggy.Observer).
func (m *Metrics) LoginRejected(error) { m.iggy.rejected.Inc() }
