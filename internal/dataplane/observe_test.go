package dataplane

import (
	"sync"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

type dataCounts struct {
	mu                sync.Mutex
	produced, fetched map[string][2]int // topic → records, bytes
}

func (d *dataCounts) add(m map[string][2]int, topic string, records, bytes int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := m[topic]
	m[topic] = [2]int{c[0] + records, c[1] + bytes}
}

func (d *dataCounts) Produced(topic string, records, bytes int) {
	d.add(d.produced, topic, records, bytes)
}
func (d *dataCounts) Fetched(topic string, records, bytes int) {
	d.add(d.fetched, topic, records, bytes)
}

// The data observer learns the records produced and fetched per Kafka topic.
func TestDataObserverCountsRecordsPerTopic(t *testing.T) {
	d := &dataCounts{produced: map[string][2]int{}, fetched: map[string][2]int{}}
	g := startGateway(t, gatewayOpts{bridge: true, data: d})
	g.mkTopic("kafka", "seen", 1)
	g.produceValues(t, "seen", 0, []byte("a"), []byte("bb"), []byte("ccc"))
	resp := g.fetchResp(t, ctxT(t), testutil.FetchPartitionsReq(12, "seen", 0, 0))
	batch := len(resp.Topics[0].Partitions[0].RecordBatches)
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.produced["seen"]; p[0] != 3 || p[1] <= 6 {
		t.Errorf("produced %v, want 3 records of more than 6 bytes", p)
	}
	if f := d.fetched["seen"]; f[0] != 3 || f[1] != batch {
		t.Errorf("fetched %v, want 3 records in %d bytes", f, batch)
	}
}
