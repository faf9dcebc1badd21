package metrics

// ProducerUsage is what the idempotent-producer state reports (producers.Usage).
type ProducerUsage interface {
	Producers() int64 // producers remembered across partitions
	Bytes() int64     // their estimated memory
}

// WatchProducers exports the idempotent-producer state's size, read at each scrape.
func (m *Metrics) WatchProducers(u ProducerUsage) {
	m.gaugeFunc("idempotent_producers", "Idempotent producers remembered, summed over partitions (docs/IDEMPOTENCE.md).",
		func() float64 { return float64(u.Producers()) })
	m.gaugeFunc("idempotent_producers_bytes", "Estimated memory of the idempotent-producer state.",
		func() float64 { return float64(u.Bytes()) })
}
