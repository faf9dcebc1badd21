package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
)

// panicCollector exports the panics supervised goroutines recovered (internal/supervise), read
// at each scrape.
type panicCollector struct{ desc *prometheus.Desc }

func (c panicCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c panicCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range supervise.Panics() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(p.Panics), p.Component)
	}
}

func (m *Metrics) watchPanics() {
	const name, help = "panics_total", "Panics recovered in the gateway's goroutines, by component (listener_reader, listener_handler, listener_writer: one connection; offsets_writer, membership, takeover, tls_watcher, topic_probe, truncation_check, tail_cache_pressure: one task or round of it); each ended that connection or task, not the process, and is logged with its stack."
	m.add(panicCollector{prometheus.NewDesc(namespace+"_"+name, help, []string{"component"}, nil)}, name, "counter", help, []string{"component"})
}
