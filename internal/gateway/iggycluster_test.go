package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/clustertest"
)

// iggyPrimary returns the node of c that is primary now, as a client given every node finds it.
func iggyPrimary(t *testing.T, c *clustertest.Cluster) int {
	t.Helper()
	cl, err := iggy.Dial(testCtx(t), iggy.Config{Addr: c.Seeds(0, 1, 2), Username: c.Username, Password: c.Password, PoolSize: 1, PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	p := c.Index(cl.Primary())
	if p < 0 {
		t.Fatalf("the primary %q is none of %v", cl.Primary(), c.Addrs)
	}
	return p
}

// produced is what a producer learnt about each record it produced.
type produced struct {
	mu         sync.Mutex
	acked      map[string]bool
	failed     map[string]error
	afterKill  time.Time // when the first record produced after the kill was acknowledged
	killedAt   time.Time
	ackedAfter int
}

// A gateway given the nodes of an Iggy cluster, a backup first, finds the primary, and when the
// primary dies it follows the new one without a restart: producing with acks=all goes on, and
// every acknowledged record is read back exactly once, by a consumer that read all along
// through the failover and by one that starts afterwards (docs/DEPLOYMENT.md, "An Iggy
// cluster").
func TestIggyClusterFailoverKeepsProducing(t *testing.T) {
	c := clustertest.Start(t, 2*time.Second)
	c.RequireFaults(t)
	old := iggyPrimary(t, c)
	backups := c.Others(old)
	g, s := start(t, nil, bridgeEnv(c.Seeds(backups[0], old, backups[1]), c.Password,
		"IGGY_KAFKA_IGGY_USERNAME="+c.Username, "IGGY_KAFKA_METRICS_ADDR=127.0.0.1:0")...)
	ctx := testCtx(t)
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	topic := "failover-" + hex.EncodeToString(suffix[:])
	adm := admin(t, g.kafkaAddr())
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}

	// A consumer reads all along, through the failover.
	live := kafkaClient(t, g.kafkaAddr(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var liveMu sync.Mutex
	liveSeen := map[string]int{}
	liveCtx, stopLive := context.WithCancel(ctx)
	var liveWG sync.WaitGroup
	liveWG.Go(func() {
		for liveCtx.Err() == nil {
			fs := live.PollFetches(liveCtx)
			liveMu.Lock()
			fs.EachRecord(func(r *kgo.Record) { liveSeen[string(r.Value)]++ })
			liveMu.Unlock()
		}
	})

	p := &produced{acked: map[string]bool{}, failed: map[string]error{}}
	producer := kafkaClient(t, g.kafkaAddr(), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(30*time.Second))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			v := fmt.Sprintf("r-%d", n)
			p.mu.Lock()
			produceAfterKill := !p.killedAt.IsZero()
			p.mu.Unlock()
			producer.Produce(ctx, &kgo.Record{Key: []byte(v), Value: []byte(v)}, func(_ *kgo.Record, err error) {
				p.mu.Lock()
				defer p.mu.Unlock()
				if err != nil {
					p.failed[v] = err
					return
				}
				p.acked[v] = true
				if produceAfterKill {
					p.ackedAfter++
					if p.afterKill.IsZero() {
						p.afterKill = time.Now()
					}
				}
			})
		}
	})
	count := func(f func() bool) func() bool {
		return func() bool { p.mu.Lock(); defer p.mu.Unlock(); return f() }
	}
	waitFor(t, "records acknowledged before the kill", count(func() bool { return len(p.acked) >= 200 }))
	// The clock starts once the node is dead (a real node's kill command takes a while).
	c.Kill(t, old)
	p.mu.Lock()
	p.killedAt = time.Now()
	p.mu.Unlock()
	t.Cleanup(func() { c.Restart(t, old) })
	waitFor(t, "records produced after the kill acknowledged", count(func() bool { return p.ackedAfter >= 200 }))
	close(stop)
	wg.Wait()
	if err := producer.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	p.mu.Lock()
	resumed := p.afterKill.Sub(p.killedAt)
	p.mu.Unlock()
	t.Logf("produce resumed %v after the Iggy primary died", resumed)
	if resumed > 10*time.Second {
		t.Errorf("produce resumed %v after the Iggy primary died, over 10 s", resumed)
	}
	for v, err := range p.failed {
		t.Errorf("record %s failed: %v", v, err)
	}

	// Every acknowledged record exactly once, read through the same gateway.
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	consumer := kafkaClient(t, g.kafkaAddr(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]int{}
	for read := int64(0); read < total; {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%d of %d records consumed: %v", read, total, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			read++
		})
	}
	waitFor(t, "the consumer that read through the failover to catch up", func() bool {
		liveMu.Lock()
		defer liveMu.Unlock()
		n := 0
		for _, k := range liveSeen {
			n += k
		}
		return int64(n) >= total
	})
	stopLive()
	liveWG.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for v := range p.acked {
		if seen[v] != 1 {
			t.Errorf("acknowledged record %s read %d times", v, seen[v])
		}
		if liveSeen[v] != 1 {
			t.Errorf("acknowledged record %s read %d times by the consumer that read through the failover", v, liveSeen[v])
		}
	}
	for v, n := range seen {
		if !p.acked[v] {
			t.Errorf("record %s read %d times but never acknowledged", v, n)
		}
	}
	t.Logf("%d records acknowledged, %d stored", len(p.acked), total)

	// Kafka's default for internal topics, 3 replicas, is what a 3-node Iggy cluster holds.
	if r, err := adm.CreateTopic(ctx, 1, 3, nil, topic+"-after"); err != nil || r.ReplicationFactor != 3 {
		t.Errorf("CreateTopics with replication factor 3 after the failover: %v, reported %d", err, r.ReplicationFactor)
	}
	waitMetrics(t, g, "iggy_gateway_kafka_iggy_failovers_total 1", "iggy_gateway_kafka_iggy_failover_resume_seconds_count 1",
		fmt.Sprintf(`iggy_gateway_kafka_iggy_primary_info{addr=%q} 1`, g.iggy.Primary()))
	if now := c.Index(g.iggy.Primary()); now < 0 || now == old {
		t.Errorf("the gateway's Iggy primary is %q after node %d died", g.iggy.Primary(), old)
	}
	if !strings.Contains(s.logs.String(), "event=iggy_failover") {
		t.Error("no log line for the move to the new primary")
	}
}

// The death of a backup moves nothing; the old primary restarted rejoins as a backup and the
// gateway stays on the new primary; records produced through it all are read back once.
func TestIggyClusterBackupDeathAndRejoin(t *testing.T) {
	c := clustertest.Start(t, time.Second)
	c.RequireFaults(t)
	old := iggyPrimary(t, c)
	g, _ := start(t, nil, bridgeEnv(c.Seeds(0, 1, 2), c.Password, "IGGY_KAFKA_IGGY_USERNAME="+c.Username)...)
	ctx := testCtx(t)
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	topic := "rejoin-" + hex.EncodeToString(suffix[:])
	adm := admin(t, g.kafkaAddr())
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	producer := kafkaClient(t, g.kafkaAddr(), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	n := 0
	produce := func(phase string) {
		t.Helper()
		for range 20 {
			v := fmt.Sprintf("%s-%d", phase, n)
			n++
			if err := producer.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
				t.Fatalf("%s: produce %s: %v", phase, v, err)
			}
		}
	}
	produce("before")
	backup := c.Others(old)[0]
	c.Kill(t, backup)
	produce("backup-dead")
	if f := g.iggy.Failovers(); f != 0 || c.Index(g.iggy.Primary()) != old {
		t.Fatalf("after a backup died: primary %s, %d failovers; want node %d, none", g.iggy.Primary(), f, old)
	}
	c.Restart(t, backup)
	c.Kill(t, old)
	produce("primary-dead")
	c.Restart(t, old)
	produce("rejoined")
	// A real cluster may change views once more after a restart (seen with Iggy 0.9.0-edge.5: the
	// restarted backup, elected primary, missed a heartbeat to the other backup, which elected
	// itself): the gateway follows every move, so more than one is no error there.
	if now, f := c.Index(g.iggy.Primary()), g.iggy.Failovers(); now < 0 || (c.Real() && f < 1) || (!c.Real() && (now == old || f != 1)) {
		t.Fatalf("after the old primary rejoined: primary %s, %d failovers; want another node than %d, one failover",
			g.iggy.Primary(), g.iggy.Failovers(), old)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic+"-after"); err != nil {
		t.Errorf("CreateTopics after the rejoin: %v", err)
	}

	consumer := kafkaClient(t, g.kafkaAddr(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]int{}
	for read := 0; read < n; {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%d of %d records consumed: %v", read, n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			read++
		})
	}
	if len(seen) != n {
		t.Errorf("read %d distinct records of %d produced", len(seen), n)
	}
	for v, k := range seen {
		if k != 1 {
			t.Errorf("record %s read %d times", v, k)
		}
	}
}
