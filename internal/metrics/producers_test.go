package metrics

import (
	"context"
	"strings"
	"testing"
)

type fakeUsage struct{ n int64 }

func (u *fakeUsage) Producers() int64 { return u.n }
func (u *fakeUsage) Bytes() int64     { return u.n * 100 }

// The producer gauges are read from the state at each scrape.
func TestProducerGauges(t *testing.T) {
	m := New()
	u := &fakeUsage{n: 3}
	m.WatchProducers(u)
	h := m.Handler(func(context.Context) error { return nil })
	u.n = 7
	_, body := get(t, h, "/metrics")
	for _, want := range []string{"iggy_gateway_kafka_idempotent_producers 7", "iggy_gateway_kafka_idempotent_producers_bytes 700"} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no %q in /metrics", want)
		}
	}
}
