package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// iggyMetrics are the bridge's round trips to Iggy.
type iggyMetrics struct {
	duration  *prometheus.HistogramVec
	calls     *prometheus.CounterVec
	rejected  prometheus.Counter
	primary   *prometheus.GaugeVec
	failovers prometheus.Counter
	resume    prometheus.Observer
}

func newIggyMetrics(m *Metrics) iggyMetrics {
	return iggyMetrics{
		duration: m.histogramVec("iggy_request_duration_seconds", "Time of an Iggy command, from taking a pooled connection to its reply.",
			prometheus.ExponentialBuckets(0.0001, 4, 10), "command"),
		calls:     m.counterVec("iggy_requests_total", "Iggy commands by outcome (ok, rejected, connection, timeout, cancelled).", "command", "outcome"),
		rejected:  m.counter("iggy_login_rejections_total", "Logins of the bridge account that Iggy refused (wrong credentials, inactive user): no retry helps until the account or Iggy changes."),
		primary:   m.gaugeVec("iggy_primary_info", "1 for the Iggy node the bridge sends its requests to (the primary of an Iggy cluster, or the one server); one series.", "addr"),
		failovers: m.counter("iggy_failovers_total", "Moves of the bridge from one Iggy primary to another (a dead primary, or a view change the roster announced)."),
		resume: m.histogramVec("iggy_failover_resume_seconds", "Time the bridge had no Iggy primary in a failover: from the first failure seen on the old primary until the new one was confirmed.",
			prometheus.ExponentialBuckets(0.1, 2, 10)).WithLabelValues(),
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

var _ iggy.PrimaryObserver = (*Metrics)(nil)

// PrimaryChanged records the bridge's Iggy primary, and a failover when it moved from another
// (iggy.PrimaryObserver); from is empty when the first primary is found.
func (m *Metrics) PrimaryChanged(from, to string, resume time.Duration) {
	m.iggy.primary.Reset()
	m.iggy.primary.WithLabelValues(to).Set(1)
	if from == "" || from == to {
		return
	}
	m.iggy.failovers.Inc()
	if resume > 0 {
		m.iggy.resume.Observe(resume.Seconds())
	}
}
