package membership

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
)

// panickingAPI panics in GetConsumerGroups while panics is set.
type panickingAPI struct {
	*iggy.Conn
	panics atomic.Bool
}

func (a *panickingAPI) GetConsumerGroups(ctx context.Context, stream, topic iggy.Identifier) ([]iggy.ConsumerGroup, error) {
	if a.panics.Load() {
		panic("membership bug")
	}
	return a.Conn.GetConsumerGroups(ctx, stream, topic)
}

func panicsOf(component string) int64 {
	for _, p := range supervise.Panics() {
		if p.Component == component {
			return p.Panics
		}
	}
	return 0
}

// A panic while polling the membership fails that round, as an unreadable membership does
// (nobody is taken for live), is counted, and polling goes on: the membership comes back.
// Before, the panic ended the process (issue 25).
func TestPollPanicRecovered(t *testing.T) {
	cfg, stream, topic := backend(t)
	api := &panickingAPI{Conn: conn(t, cfg)}
	changes := make(chan []int32, 64)
	m, err := Start(t.Context(), Config{
		API: api, Stream: stream, Topic: topic, Self: 1, Nodes: []int32{1}, Settings: "s1", Interval: 20 * time.Millisecond,
		OnChange: func(live []int32) { changes <- live }, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	n := &node{m: m, changes: changes}
	n.await(t, 1)
	before := panicsOf("membership")
	api.panics.Store(true)
	n.await(t) // nobody live while polls fail
	api.panics.Store(false)
	n.await(t, 1)
	if panicsOf("membership") == before {
		t.Error("no membership panic counted")
	}
}
