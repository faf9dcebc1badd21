// Package metrics exposes the gateway's Prometheus metrics and health endpoints. Every metric
// is listed, with its type, labels and help, in docs/METRICS.md, which is generated from
// Catalog (go generate ./internal/metrics); a test fails when it is stale.
//
// The api label is the Kafka API name for keys the gateway serves and "unsupported" for any
// other key, and the topic label holds at most MaxTopicLabels topics (later ones count as
// "other"), so a client cannot create label values without bound.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/versions"
)

const namespace = "iggy_gateway_kafka"

// Metrics implements listener.Observer, iggy.Observer and broker.DataObserver over a
// Prometheus registry.
type Metrics struct {
	reg     *prometheus.Registry
	catalog []Info

	connOpen    *prometheus.GaugeVec
	connTotal   *prometheus.CounterVec
	connRefused *prometheus.CounterVec
	inFlight    prometheus.Gauge
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	bytesIn     *prometheus.CounterVec
	bytesOut    *prometheus.CounterVec
	refused     *prometheus.CounterVec
	recoveries  prometheus.Counter
	truncations prometheus.Counter
	loadTime    prometheus.Gauge
	suppressed  *prometheus.CounterVec

	iggy  iggyMetrics
	topic topicMetrics
}

var _ listener.Observer = (*Metrics)(nil)

// Info describes one metric, for docs/METRICS.md and the checks of deploy/.
type Info struct {
	Name   string // full name
	Type   string // counter, gauge, histogram
	Labels []string
	Help   string
}

// New returns metrics registered in a fresh registry, with the Go runtime and process
// collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.connOpen = m.gaugeVec("connections_open", "Kafka connections open.", "listener")
	m.connTotal = m.counterVec("connections_total", "Kafka connections accepted.", "listener")
	m.connRefused = m.counterVec("connections_refused_total", "Kafka connections closed on accept because of the connection limit.", "listener")
	m.inFlight = m.gauge("requests_in_flight", "Kafka requests read and not yet answered.")
	m.requests = m.counterVec("requests_total", "Kafka requests by API and outcome (answered, no_response, invalid, rejected, failed, abandoned).", "listener", "api", "outcome")
	m.duration = m.histogramVec("request_duration_seconds", "Time from a Kafka request's arrival to its response being written.",
		prometheus.ExponentialBuckets(0.0001, 4, 10), "listener", "api")
	m.bytesIn = m.counterVec("request_bytes_total", "Bytes of Kafka request frames read.", "listener")
	m.bytesOut = m.counterVec("response_bytes_total", "Bytes of Kafka responses written.", "listener")
	m.refused = m.counterVec("refused_total", "Kafka connections and requests refused, by reason (too_many_connections, frame_length, unsupported, malformed, unauthenticated, request_memory); each closes its connection.", "listener", "reason")
	m.recoveries = m.counter("coordinator_log_recoveries_total", "Coordinator-log partitions loaded from an earlier checkpoint or a full replay because their checkpoint was damaged.")
	m.loadTime = m.gauge("coordinator_log_load_duration_seconds", "Time the last start took to load committed offsets (checkpoints and replay of the coordinator log).")
	m.suppressed = m.counterVec("log_lines_suppressed_total", "Log lines of connection events, refusals and per-entry request events dropped by the rate limit, by event.", "event")
	m.truncations = m.counter("partition_truncations_total", "Partitions whose log end was found below the high watermark the gateway had seen (Iggy lost a tail); each bumps the partition's leader epoch.")
	m.watchPanics()
	m.iggy = newIggyMetrics(m)
	m.topic = newTopicMetrics(m)
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Catalog lists the gateway's own metrics (not the standard go_* and process_* ones).
func (m *Metrics) Catalog() []Info { return m.catalog }

// Registry lets other packages register their collectors next to these.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func (m *Metrics) add(c prometheus.Collector, name, typ, help string, labels []string) {
	m.reg.MustRegister(c)
	m.catalog = append(m.catalog, Info{Name: namespace + "_" + name, Type: typ, Labels: labels, Help: help})
}

func (m *Metrics) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help})
	m.add(c, name, "counter", help, nil)
	return c
}

func (m *Metrics) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels)
	m.add(c, name, "counter", help, labels)
	return c
}

func (m *Metrics) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help})
	m.add(g, name, "gauge", help, nil)
	return g
}

func (m *Metrics) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help}, labels)
	m.add(g, name, "gauge", help, labels)
	return g
}

func (m *Metrics) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: name, Help: help, Buckets: buckets}, labels)
	m.add(h, name, "histogram", help, labels)
	return h
}

func (m *Metrics) ConnOpened(l string) {
	m.connOpen.WithLabelValues(l).Inc()
	m.connTotal.WithLabelValues(l).Inc()
}

func (m *Metrics) ConnClosed(l string)  { m.connOpen.WithLabelValues(l).Dec() }
func (m *Metrics) ConnRefused(l string) { m.connRefused.WithLabelValues(l).Inc() }

func (m *Metrics) Refused(l string, reason listener.Refusal) {
	m.refused.WithLabelValues(l, string(reason)).Inc()
}

func (m *Metrics) RequestRead(l string, frameBytes int) {
	m.inFlight.Inc()
	m.bytesIn.WithLabelValues(l).Add(float64(frameBytes))
}

func (m *Metrics) RequestDone(l string, api int16, latency time.Duration, responseBytes int, outcome listener.Outcome) {
	m.inFlight.Dec()
	name := apiName(api)
	m.requests.WithLabelValues(l, name, string(outcome)).Inc()
	if outcome == listener.Answered || outcome == listener.NoResponse || outcome == listener.Invalid {
		m.duration.WithLabelValues(l, name).Observe(latency.Seconds())
	}
	m.bytesOut.WithLabelValues(l).Add(float64(responseBytes))
}

// CoordinatorLogRecovered counts a coordinator-log partition recovered from a damaged
// checkpoint (it fits offsets.Config.OnRecovery).
func (m *Metrics) CoordinatorLogRecovered(int) { m.recoveries.Inc() }

// PartitionTruncated counts a detected truncation of a partition's log (it fits
// broker.Options.OnTruncation).
func (m *Metrics) PartitionTruncated() { m.truncations.Inc() }

// CoordinatorLogLoaded records how long loading the committed offsets took.
func (m *Metrics) CoordinatorLogLoaded(d time.Duration) { m.loadTime.Set(d.Seconds()) }

// LogSuppressed counts a log line dropped by the rate limit (it fits loglimit.New).
func (m *Metrics) LogSuppressed(event string) { m.suppressed.WithLabelValues(event).Inc() }

func apiName(key int16) string {
	if _, ok := versions.Lookup(key); ok {
		return kmsg.NameForKey(key)
	}
	return "unsupported"
}

// Handler serves /metrics, /healthz (the process is up) and /readyz (ready returns nil: the
// gateway serves Kafka clients and its bridge answers).
func (m *Metrics) Handler(ready func(context.Context) error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := ready(ctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	return mux
}

// readyTimeout bounds a readiness check (a ping to Iggy).
const readyTimeout = 2 * time.Second
