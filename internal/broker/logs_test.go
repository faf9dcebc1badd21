package broker

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/loglimit"
)

// lockedBuffer is a log destination safe for the handlers' goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// One Produce request refused for thousands of partitions logs a burst of lines, not one
// per partition; the rest are counted as suppressed.
func TestPerPartitionLogLinesRateLimited(t *testing.T) {
	var out lockedBuffer
	suppressed := 0
	var mu sync.Mutex
	lim := loglimit.New(1, 5, func(string) { mu.Lock(); suppressed++; mu.Unlock() })
	g := startGateway(t, gatewayOpts{bridge: true, logLimit: lim,
		logger: slog.New(slog.NewTextHandler(&out, nil))})
	g.mkTopic("kafka", "flood", 1)
	cl, _ := g.kafka()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "flood"
	const entries = 2000
	for range entries {
		p := kmsg.NewProduceRequestTopicPartition()
		p.Records = []byte("not a record batch")
		rt.Partitions = append(rt.Partitions, p)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctxT(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode == 0 {
			t.Fatalf("garbage batch accepted: %+v", p)
		}
	}
	lines := out.count("produce: partition refused")
	mu.Lock()
	defer mu.Unlock()
	if lines > 10 || lines+suppressed != entries {
		t.Fatalf("%d lines logged, %d suppressed, for %d refused partitions", lines, suppressed, entries)
	}
}
