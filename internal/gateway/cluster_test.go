package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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
