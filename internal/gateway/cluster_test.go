package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
)

// TestThreeGatewaysShareTheWork runs three gateways over one Iggy: clients bootstrapped with
// all three create a topic (on whichever gateway is the controller), produce to the leaders
// and consume in a group; when one gateway stops, the others take its partitions and groups
// over and the group continues from its committed offsets.
func TestThreeGatewaysShareTheWork(t *testing.T) {
	iggyAddr, _, password := testIggy(t)
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	var brokers []string
	for i, a := range addrs {
		brokers = append(brokers, fmt.Sprintf("%d@%s", i+1, a))
	}
	gws := make([]*Gateway, 3)
	for i, a := range addrs {
		gws[i], _ = start(t, nil, bridgeEnv(iggyAddr, password, "IGGY_KAFKA_BIND_ADDR="+a,
			fmt.Sprintf("IGGY_KAFKA_NODE_ID=%d", i+1), "IGGY_KAFKA_BROKERS="+strings.Join(brokers, ","))...)
	}
	seeds := kgo.SeedBrokers(addrs...)
	ctx := testCtx(t)
	adm := admin(t, addrs[0], seeds)
	// A fresh client each time: kgo answers repeated Metadata requests from its cache.
	brokerCount := func(addr string) int {
		c, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		m, err := kadm.NewClient(c).BrokerMetadata(ctx)
		if err != nil {
			return -1
		}
		return len(m.Brokers)
	}
	waitFor(t, "three brokers in Metadata", func() bool { return brokerCount(addrs[0]) == 3 })
	topic := "shared"
	if _, err := adm.CreateTopic(ctx, 6, 1, nil, topic); err != nil {
		t.Fatalf("CreateTopic through the controller: %v", err)
	}
	prod := kafkaClient(t, addrs[0], seeds, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := prod.ProduceSync(ctx, kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	produce(0, 60)

	seen := map[string]bool{}
	consume := func(want int) {
		cons := kafkaClient(t, addrs[1], seeds, kgo.ConsumerGroup("readers"), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
		defer cons.Close()
		for len(seen) < want {
			fs := cons.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				t.Fatalf("consumed %d of %d records", len(seen), want)
			}
			fs.EachRecord(func(r *kgo.Record) {
				if seen[string(r.Value)] {
					t.Errorf("record %s consumed twice: the committed offsets went back", r.Value)
				}
				seen[string(r.Value)] = true
			})
			if err := cons.CommitUncommittedOffsets(ctx); err != nil {
				t.Logf("commit: %v", err)
			}
		}
	}
	consume(60)

	gws[2].Stop() // its partitions, groups and maybe the controller move to 1 and 2
	start := time.Now()
	waitFor(t, "two brokers in Metadata", func() bool { return brokerCount(addrs[0]) == 2 })
	produce(60, 120)
	consume(120)
	t.Logf("after the stop, 60 more records were produced and consumed within %s", time.Since(start).Round(time.Millisecond))
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "after"); err != nil {
		t.Fatalf("CreateTopic after the controller may have moved: %v", err)
	}
}

// TestSharedSettings: the settings every gateway must share give the fingerprint; other
// settings (the node's own id, address, logging) do not change it.
func TestSharedSettings(t *testing.T) {
	mapFile := func(body string) string {
		path := filepath.Join(t.TempDir(), "map.toml")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return "IGGY_KAFKA_TOPIC_MAP_PATH=" + path
	}
	base := []string{"IGGY_KAFKA_BROKERS=1@127.0.0.1:9093,2@127.0.0.1:9094", "IGGY_KAFKA_NODE_ID=1", "IGGY_KAFKA_BIND_ADDR=127.0.0.1:9093"}
	fp := func(env ...string) string {
		t.Helper()
		cfg, err := config.Load(nil, append(slices.Clone(base), env...))
		if err != nil {
			t.Fatal(err)
		}
		return fingerprint(sharedSettings(cfg))
	}
	same := fp()
	for _, env := range [][]string{
		{"IGGY_KAFKA_NODE_ID=2", "IGGY_KAFKA_BIND_ADDR=127.0.0.1:9094"},
		{"IGGY_KAFKA_LOG_LEVEL=debug", "IGGY_KAFKA_COORDINATOR_LOG_ENABLED=true"},
		{mapFile(`default_stream = "kafka"`)},
	} {
		if got := fp(env...); got != same {
			t.Errorf("%v changes the fingerprint", env)
		}
	}
	for _, env := range [][]string{
		{"IGGY_KAFKA_IGGY_STREAM=other"},
		{"IGGY_KAFKA_COORDINATOR_LOG_ENABLED=false"},
		{mapFile("default_stream = \"kafka\"\n[topics.orders]\nstream = \"billing\"\n")},
	} {
		if got := fp(env...); got == same {
			t.Errorf("%v leaves the fingerprint as it is", env)
		}
	}
}

// A panic while loading a coordinator-log partition this gateway takes over is recovered,
// logged and counted (internal/supervise, component "takeover") and the takeover retried, so
// the partition ends up loaded; close waits for the takeover goroutines.
func TestTakeoverPanicIsRetried(t *testing.T) {
	before := panicsOf("takeover")
	var attempts atomic.Int32
	loaded := make(chan int, 1)
	c := &cluster{
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), pending: make(map[int]context.CancelFunc), delay: time.Millisecond,
		acquire: func(ctx context.Context, k int) error {
			if attempts.Add(1) == 1 {
				panic("injected load panic")
			}
			loaded <- k
			return nil
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.pending[7] = cancel
	c.taking.Go(func() { c.takeOver(ctx, 7) })
	select {
	case k := <-loaded:
		if k != 7 {
			t.Fatalf("loaded partition %d", k)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the partition was not loaded after the panic")
	}
	c.close()
	if got := panicsOf("takeover"); got != before+1 {
		t.Errorf("panics %d, want %d", got, before+1)
	}
	if n := attempts.Load(); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
}

func panicsOf(component string) int64 {
	for _, c := range supervise.Panics() {
		if c.Component == component {
			return c.Panics
		}
	}
	return 0
}
