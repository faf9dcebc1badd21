package metrics

import "github.com/prometheus/client_golang/prometheus"

// gaugeFunc registers a gauge whose value fn reads at each scrape.
func (m *Metrics) gaugeFunc(name, help string, fn func() float64) {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help}, fn)
	m.add(g, name, "gauge", help, nil)
}

// PoolStats is what the Iggy connection pool reports (iggy.Client.PoolStats).
type PoolStats func() (size, inUse, waiting int)

// WatchPool exports the bridge's Iggy pool state, read at each scrape.
func (m *Metrics) WatchPool(stats PoolStats) {
	m.gaugeFunc("iggy_pool_connections", "Connections of the bridge's Iggy pool.", func() float64 { s, _, _ := stats(); return float64(s) })
	m.gaugeFunc("iggy_pool_connections_in_use", "Pooled Iggy connections a call holds.", func() float64 { _, u, _ := stats(); return float64(u) })
	m.gaugeFunc("iggy_pool_waiting_calls", "Calls waiting for a pooled Iggy connection.", func() float64 { _, _, w := stats(); return float64(w) })
}

// WatchBudget exports the request-memory budget (listener.Budget.Usage), read at each scrape.
func (m *Metrics) WatchBudget(usage func() (inUse, limit int64)) {
	m.gaugeFunc("request_memory_in_use_bytes", "Bytes of Kafka request frames held in memory (IGGY_KAFKA_MAX_REQUEST_MEMORY bounds them).",
		func() float64 { n, _ := usage(); return float64(n) })
	m.gaugeFunc("request_memory_limit_bytes", "The request-memory budget (IGGY_KAFKA_MAX_REQUEST_MEMORY).",
		func() float64 { _, n := usage(); return float64(n) })
}

// WatchCoordinatorLog exports the coordinator log's size in Iggy; size must be cheap (cached).
func (m *Metrics) WatchCoordinatorLog(size func() (bytes, records uint64)) {
	m.gaugeFunc("coordinator_log_bytes", "Bytes of the coordinator log in Iggy (read at most every 15 s).",
		func() float64 { b, _ := size(); return float64(b) })
	m.gaugeFunc("coordinator_log_records", "Records of the coordinator log in Iggy (read at most every 15 s).",
		func() float64 { _, n := size(); return float64(n) })
}
