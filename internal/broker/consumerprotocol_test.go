package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
)

// consumerProtocolGroups is the coordinator configuration of the KIP-848 tests: heartbeats
// every 100ms, so that reconciliation takes a fraction of a second.
func consumerProtocolGroups() *groups.Config {
	cfg := fastGroups()
	cfg.Consumer.HeartbeatInterval = 100 * time.Millisecond
	cfg.Consumer.SessionTimeout = 3 * time.Second
	return cfg
}

// cpMember is a franz-go consumer of the consumer group protocol that records what it
// consumed, commits after processing each poll, and blocks rebalances while it processes,
// so that every record is processed once per committed offset.
type cpMember struct {
	cl   *kgo.Client
	quit chan struct{}
	done chan struct{}
}

func startCPMember(t *testing.T, g *gateway, group, topic string, balancer kgo.GroupBalancer, seen func(string)) *cpMember {
	t.Helper()
	cl, _ := g.kafka(
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.Balancers(balancer), kgo.ServerSideBalancer(),
		kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.FetchMaxWait(100*time.Millisecond),
	)
	m := &cpMember{cl: cl, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			select {
			case <-m.quit:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			fs := cl.PollFetches(ctx)
			cancel()
			if fs.IsClientClosed() {
				return
			}
			fs.EachRecord(func(r *kgo.Record) { seen(string(r.Value)) })
			if err := cl.CommitUncommittedOffsets(context.Background()); err != nil {
				t.Logf("commit: %v", err)
			}
			cl.AllowRebalance()
		}
	}()
	return m
}

// stop ends the poll loop (with rebalances allowed) and closes the client, which leaves the
// group (member epoch -1).
func (m *cpMember) stop() {
	close(m.quit)
	<-m.done
	m.cl.Close()
}

func TestConsumerProtocolFranzGoMembersJoinAndLeaveExactlyOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		balancer kgo.GroupBalancer
		assignor string
	}{{"uniform", kgo.CooperativeStickyBalancer(), "uniform"}, {"range", kgo.RangeBalancer(), "range"}} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateway(t, gatewayOpts{bridge: true, groups: consumerProtocolGroups()})
			topic, group := "cp-"+tc.name, "cpg-"+tc.name
			g.mkKafkaTopic(topic, 6)
			producer, adm := g.kafka(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))

			var mu sync.Mutex
			counts := map[string]int{}
			seen := func(v string) { mu.Lock(); counts[v]++; mu.Unlock() }
			total := 0
			produce := func(n int) {
				for range n {
					if err := producer.ProduceSync(ctxT(t), &kgo.Record{Value: fmt.Appendf(nil, "v%05d", total)}).FirstErr(); err != nil {
						t.Fatal(err)
					}
					total++
				}
			}
			waitAll := func(stage string) {
				t.Helper()
				deadline := time.Now().Add(20 * time.Second)
				for {
					mu.Lock()
					n := len(counts)
					mu.Unlock()
					if n == total {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: consumed %d distinct records of %d", stage, n, total)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}

			produce(120)
			a := startCPMember(t, g, group, topic, tc.balancer, seen)
			waitAll("one member")
			b := startCPMember(t, g, group, topic, tc.balancer, seen)
			c := startCPMember(t, g, group, topic, tc.balancer, seen)
			produce(300)
			waitAll("three members")

			described, err := adm.DescribeConsumerGroups(ctxT(t), group)
			if err != nil {
				t.Fatal(err)
			}
			d := described[group]
			if d.Err != nil || d.AssignorName != tc.assignor || len(d.Members) != 3 {
				t.Fatalf("described: err %v assignor %q members %d", d.Err, d.AssignorName, len(d.Members))
			}
			owned := 0
			for _, m := range d.Members {
				for _, ps := range m.Assignment {
					owned += len(ps)
				}
			}
			if owned > 6 {
				t.Fatalf("members own %d partitions of 6", owned)
			}

			a.stop()
			produce(200)
			waitAll("a member left")
			d2 := startCPMember(t, g, group, topic, tc.balancer, seen)
			b.stop()
			produce(200)
			waitAll("members joined and left")
			c.stop()
			d2.stop()

			mu.Lock()
			defer mu.Unlock()
			for v, n := range counts {
				if n != 1 {
					t.Errorf("record %s consumed %d times", v, n)
				}
			}

			listed, err := adm.ListGroupsByType(ctxT(t), []string{"consumer"})
			if err != nil {
				t.Fatal(err)
			}
			if lg, ok := listed[group]; !ok || lg.State != "Empty" {
				t.Fatalf("listed %+v", listed)
			}
			// The committed offsets are where the records end: 6 partitions, total records.
			offs, err := adm.FetchOffsets(ctxT(t), group)
			if err != nil {
				t.Fatal(err)
			}
			sum := int64(0)
			offs.Each(func(o kadm.OffsetResponse) { sum += o.At })
			if sum != int64(total) {
				t.Fatalf("committed offsets sum to %d, want %d", sum, total)
			}
		})
	}
}

func TestConsumerProtocolTopicIDsInMetadata(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkKafkaTopic("ids", 1)
	cl, _ := g.kafka()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("ids")
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctxT(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].TopicID == ([16]byte{}) {
		t.Fatalf("no topic id: %+v", resp.Topics)
	}
	// Consumer-protocol clients look the topics of their assignment up by id.
	id := resp.Topics[0].TopicID
	byID := kmsg.NewPtrMetadataRequest()
	byID.Version = 12
	for _, want := range [][16]byte{id, {1}} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID = want
		byID.Topics = append(byID.Topics, rt)
	}
	resp, err = byID.RequestWith(ctxT(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 2 || resp.Topics[0].Topic == nil || *resp.Topics[0].Topic != "ids" || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].TopicID != id {
		t.Fatalf("lookup by id: %+v", resp.Topics)
	}
	if resp.Topics[1].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown id: %+v", resp.Topics[1])
	}
}
