package metrics

import "github.com/prometheus/client_golang/prometheus"

// MaxGroupLabels bounds the consumer groups a scrape reports (the first in name order).
const MaxGroupLabels = 100

// GroupLag is one consumer group as a scrape reports it (broker.GroupLag).
type GroupLag struct {
	Group, State string
	Lag          int64
	Partitions   int
}

// groupCollector computes consumer-group lag at each scrape through groups, which must bound
// its own time and the number of groups (MaxGroupLabels).
type groupCollector struct {
	groups                   func() []GroupLag
	lag, partitions, stateDs *prometheus.Desc
}

// WatchGroups exports consumer-group state and lag, computed at each scrape by groups.
func (m *Metrics) WatchGroups(groups func() []GroupLag) {
	c := &groupCollector{groups: groups}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		m.catalog = append(m.catalog, Info{Name: namespace + "_" + name, Type: "gauge", Labels: labels, Help: help})
		return prometheus.NewDesc(namespace+"_"+name, help, labels, nil)
	}
	c.lag = desc("consumer_group_lag_records", "Records between a consumer group's committed offsets and the ends of their partitions, summed over its partitions (computed at each scrape, first 100 groups by name).", "group")
	c.partitions = desc("consumer_group_committed_partitions", "Partitions with a committed offset that the group's lag covers.", "group")
	c.stateDs = desc("consumer_group_state", "1 for the group's current state (Empty, Stable, PreparingRebalance, CompletingRebalance, Dead; empty when only its offsets are known).", "group", "state")
	m.reg.MustRegister(c)
}

func (c *groupCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lag
	ch <- c.partitions
	ch <- c.stateDs
}

func (c *groupCollector) Collect(ch chan<- prometheus.Metric) {
	for _, g := range c.groups() {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(g.Lag), g.Group)
		ch <- prometheus.MustNewConstMetric(c.partitions, prometheus.GaugeValue, float64(g.Partitions), g.Group)
		ch <- prometheus.MustNewConstMetric(c.stateDs, prometheus.GaugeValue, 1, g.Group, g.State)
	}
}
