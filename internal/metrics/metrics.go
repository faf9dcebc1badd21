// Package metrics exposes the gateway's Prometheus metrics and health endpoints.
//
// Metrics (all prefixed iggy_gateway_kafka_):
//
//	connections_open{listener}                 gauge
//	connections_total{listener}                counter, accepted connections
//	connections_refused_total{listener}        counter, closed on accept (MAX_CONNECTIONS)
//	requests_in_flight                         gauge, read and not yet answered
//	requests_total{listener,api,outcome}       counter; outcome: answered, no_response,
//	                                           invalid, rejected, failed, abandoned
//	request_duration_seconds{listener,api}     histogram, frame arrival → response written
//	request_bytes_total{listener}              counter
//	response_bytes_total{listener}             counter
//	coordinator_log_recoveries_total           counter, coordinator-log partitions loaded
//	                                           from an earlier checkpoint or a full replay
//	                                           because their checkpoint was damaged
//	idempotent_producers                       gauge, producers remembered (producers.go)
//	idempotent_producers_bytes                 gauge, their estimated memory
//
// The api label is the Kafka API name for keys the gateway serves and "unsupported" for any
// other key, so a client sending garbage cannot create label values.
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

// Metrics implements listener.Observer over a Prometheus registry.
type Metrics struct {
	reg         *prometheus.Registry
	connOpen    *prometheus.GaugeVec
	connTotal   *prometheus.CounterVec
	connRefused *prometheus.CounterVec
	inFlight    prometheus.Gauge
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	bytesIn     *prometheus.CounterVec
	bytesOut    *prometheus.CounterVec
	recoveries  prometheus.Counter
	truncations prometheus.Counter
}

var _ listener.Observer = (*Metrics)(nil)

// New returns metrics registered in a fresh registry, with the Go runtime and process
// collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		connOpen: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "connections_open",
			Help: "Kafka connections open."}, []string{"listener"}),
		connTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "connections_total",
			Help: "Kafka connections accepted."}, []string{"listener"}),
		connRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "connections_refused_total",
			Help: "Kafka connections closed on accept because of the connection limit."}, []string{"listener"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "requests_in_flight",
			Help: "Kafka requests read and not yet answered."}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "requests_total",
			Help: "Kafka requests by API and outcome."}, []string{"listener", "api", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "request_duration_seconds",
			Help:    "Time from a request's arrival to its response being written.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}, []string{"listener", "api"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "request_bytes_total",
			Help: "Bytes of Kafka request frames read."}, []string{"listener"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "response_bytes_total",
			Help: "Bytes of Kafka responses written."}, []string{"listener"}),
		recoveries: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "coordinator_log_recoveries_total",
			Help: "Coordinator-log partitions loaded from an earlier checkpoint or a full replay because their checkpoint was damaged."}),
		truncations: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "partition_truncations_total",
			Help: "Partitions whose log end was found below the high watermark the gateway had seen (Iggy lost a tail); each bumps the partition's leader epoch."}),
	}
	m.reg.MustRegister(m.connOpen, m.connTotal, m.connRefused, m.inFlight, m.requests, m.duration, m.bytesIn, m.bytesOut, m.recoveries, m.truncations,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry lets other packages register their collectors next to these.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func (m *Metrics) ConnOpened(l string) {
	m.connOpen.WithLabelValues(l).Inc()
	m.connTotal.WithLabelValues(l).Inc()
}

func (m *Metrics) ConnClosed(l string)  { m.connOpen.WithLabelValues(l).Dec() }
func (m *Metrics) ConnRefused(l string) { m.connRefused.WithLabelValues(l).Inc() }

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
