package metrics

import "github.com/prometheus/client_golang/prometheus"

// ProducerUsage is what the idempotent-producer state reports (producers.Usage).
type ProducerUsage interface {
	Producers() int64 // producers remembered across partitions
	Bytes() int64     // their estimated memory
}

// WatchProducers exports the idempotent-producer state's size, read at each scrape:
//
//	idempotent_producers         gauge, producers remembered across partitions
//	idempotent_producers_bytes   gauge, their estimated memory
func (m *Metrics) WatchProducers(u ProducerUsage) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: "idempotent_producers",
			Help: "Idempotent producers remembered, summed over partitions (docs/IDEMPOTENCE.md)."},
			func() float64 { return float64(u.Producers()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: "idempotent_producers_bytes",
			Help: "Estimated memory of the idempotent-producer state."},
			func() float64 { return float64(u.Bytes()) }),
	)
}
