package hostile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func isAddrUnavailable(err error) bool { return errors.Is(err, syscall.EADDRNOTAVAIL) }

// Each class of hostile traffic from docs/LIMITS.md, one after the other against one gateway.
// The sizes in the comments are what the traffic would cost without the limits at scale 1.
func TestHostileTraffic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and attacks the gateway binary")
	}
	n := scale(t)
	g := startTarget(t)

	// Class 1: DescribeConfigs naming the cluster-default broker resource ~150,000 times per
	// 1 MiB request, with synonyms: ~6 KiB of encoded answer per 7-byte entry (more as Go
	// structures), ~1 GB per request, 8 at once.
	t.Run("response amplification", func(t *testing.T) {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Version, req.IncludeSynonyms = 1, true
		broker := kmsg.NewDescribeConfigsRequestResource()
		broker.ResourceType = kmsg.ConfigResourceTypeBroker // the name "" is the cluster default
		for range (maxFrame - 1024) / 7 {
			req.Resources = append(req.Resources, broker)
		}
		body := req.AppendTo(nil)
		g.underAttack(t, func() {
			parallel(8*n, func(int) { g.exchange(t, kmsg.DescribeConfigs.Int16(), 1, body, time.Minute) })
		})
	})

	// Class 2: Metadata requests of 1 MiB holding ~500,000 empty topic names, which decode
	// into ~30 MiB each; 32 at once decode into ~1 GB.
	t.Run("decode amplification", func(t *testing.T) {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 4
		body := hostileBody(req, maxFrame-64)
		g.underAttack(t, func() {
			parallel(32*n, func(int) { g.exchange(t, kmsg.Metadata.Int16(), 4, body, time.Minute) })
		})
	})

	// Class 3: 32 consumers fetching a 16 MiB partition at once with max_bytes of 1 GiB:
	// reads and encoded answers of ~1 GB together.
	t.Run("concurrent large fetches", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cl := g.client(t)
		const topic = "hostile-fetch"
		if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
		value := bytes.Repeat([]byte("x"), 64<<10)
		for range 256 { // 16 MiB
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.MaxBytes, req.MaxWaitMillis, req.ReplicaID = 11, 1<<30, 0, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = 1<<30, -1, -1
		rt.Partitions = []kmsg.FetchRequestTopicPartition{rp}
		req.Topics = []kmsg.FetchRequestTopic{rt}
		body := req.AppendTo(nil)
		var records atomic.Int64
		g.underAttack(t, func() {
			parallel(32*n, func(int) {
				for range 2 {
					records.Add(fetchedBytes(g.exchange(t, kmsg.Fetch.Int16(), 11, body, time.Minute)))
				}
			})
		})
		t.Logf("%d MiB of records fetched", records.Load()>>20)
		if records.Load() == 0 {
			t.Error("no fetch was answered with records")
		}
	})

	// Class 4: 40 connections each announcing a 1 MiB frame, sending 900 KiB of it and
	// stalling: they ask for more than the budget while the health client keeps asking.
	t.Run("slow senders", func(t *testing.T) {
		g.underAttack(t, func() {
			var conns []*rawConn
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			parallel(1, func(int) {
				for range 40 * n {
					c, err := dialFrom(attacker, g.gw.Addr)
					if err != nil {
						t.Error(err)
						return
					}
					conns = append(conns, c)
					c.nc.Write(binary.BigEndian.AppendUint32(nil, maxFrame))
					c.nc.Write(make([]byte, 900<<10))
				}
			})
			time.Sleep(readTimeout / 2) // the stall, while the health client asks
		})
	})

	// Class 5: every connection slot held by idle clients that completed a request.
	t.Run("idle connection slots", func(t *testing.T) {
		g.underAttack(t, func() {
			var conns []*rawConn
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			for range maxConns * n {
				c, err := dialFrom(attacker, g.gw.Addr)
				if err != nil {
					t.Error(err)
					return
				}
				conns = append(conns, c)
				if c.send(kmsg.NewPtrApiVersionsRequest()) == nil {
					c.read(5 * time.Second) // evicted ones read nothing
				}
			}
			time.Sleep(time.Second) // the health client needs a slot now
		})
	})

	// Class 6: Produce requests refused for ~80,000 partitions each: a log line per
	// partition would be ~20 MB of log per request.
	t.Run("log flooding", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		const topic = "hostile-logs"
		if _, err := kadm.NewClient(g.client(t)).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 7, 1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		p := kmsg.NewProduceRequestTopicPartition()
		p.Records = []byte("junk")
		for len(rt.Partitions) < (maxFrame-1024)/12 {
			rt.Partitions = append(rt.Partitions, p)
		}
		req.Topics = []kmsg.ProduceRequestTopic{rt}
		body := req.AppendTo(nil)
		before := g.gw.Output.Mark()
		g.underAttack(t, func() {
			parallel(4*n, func(int) { g.exchange(t, kmsg.Produce.Int16(), 7, body, time.Minute) })
		})
		logged := g.gw.Output.Mark() - before
		t.Logf("%d bytes logged for %d refused partitions", logged, 4*n*len(rt.Partitions))
		if logged > 256<<10 {
			t.Errorf("%d bytes logged: per-partition lines are not rate-limited", logged)
		}
	})
}

// fetchedBytes is how many record bytes a Fetch v11 answer carries (0 for none).
func fetchedBytes(body []byte) int64 {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 11
	if body == nil || resp.ReadFrom(body) != nil {
		return 0
	}
	var n int64
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			n += int64(len(p.RecordBatches))
		}
	}
	return n
}
