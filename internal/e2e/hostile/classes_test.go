package hostile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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

	// Class 7 (issue 25): Produce requests of ~10 million empty topic entries in 32 MiB, two
	// from each of two addresses at once. Decoded, each is ~1.4 GB; before, one such request
	// of ~100 MB took the gateway to 7 GiB, two from two addresses got it OOM-killed.
	t.Run("produce of empty topic entries", func(t *testing.T) {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, 1, 5000
		entries := (largeFrame - 1024) / 3
		body := repeatedEntries(req, func(n int) { req.Topics = make([]kmsg.ProduceRequestTopic, n) }, entries)
		var answered atomic.Int32
		g.underAttack(t, func() {
			parallel(4*n, func(i int) {
				if g.exchangeFrom(t, []string{attacker, attacker2}[i%2], kmsg.Produce.Int16(), 9, body, time.Minute) != nil {
					answered.Add(1)
				}
			})
		})
		t.Logf("%d-byte requests of %d empty topics: %d of %d answered", len(body), entries, answered.Load(), 4*n)
		if answered.Load() != 0 {
			t.Error("a request that decodes into gigabytes was answered: it was decoded")
		}
	})

	// Class 8 (issue 25): arrays of empty entries in the other APIs that take arrays, at 4 MiB
	// (each would decode into ~150–250 MiB: refused) and at 256 KiB (~10–20 MiB: decoded
	// within the budget and answered), 4 of each at once from two addresses.
	t.Run("empty entries in other APIs", func(t *testing.T) {
		type shape struct {
			name string
			req  kmsg.Request
			fill func(n int) // sets the array of req to n empty entries
			wire int         // bytes per empty entry
		}
		fetch := kmsg.NewPtrFetchRequest()
		fetch.Version, fetch.ReplicaID = 12, -1
		fetchParts := kmsg.NewPtrFetchRequest()
		fetchParts.Version, fetchParts.ReplicaID = 12, -1
		list := kmsg.NewPtrListOffsetsRequest()
		list.Version, list.ReplicaID = 7, -1
		commit := kmsg.NewPtrOffsetCommitRequest()
		commit.Version, commit.Group, commit.Generation = 8, "hostile", -1
		configs := kmsg.NewPtrDescribeConfigsRequest()
		configs.Version = 4
		metadata := kmsg.NewPtrMetadataRequest()
		metadata.Version = 12
		shapes := []shape{
			{"Fetch v12 topics", fetch, func(n int) { fetch.Topics = make([]kmsg.FetchRequestTopic, n) }, 3},
			{"Fetch v12 partitions", fetchParts, func(n int) {
				fetchParts.Topics = []kmsg.FetchRequestTopic{{Topic: "hostile-fetch", Partitions: make([]kmsg.FetchRequestTopicPartition, n)}}
			}, 43},
			{"ListOffsets v7 partitions", list, func(n int) {
				list.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "hostile-fetch", Partitions: make([]kmsg.ListOffsetsRequestTopicPartition, n)}}
			}, 17},
			{"OffsetCommit v8 topics", commit, func(n int) { commit.Topics = make([]kmsg.OffsetCommitRequestTopic, n) }, 3},
			{"DescribeConfigs v4 resources", configs, func(n int) { configs.Resources = make([]kmsg.DescribeConfigsRequestResource, n) }, 4},
			{"Metadata v12 topics", metadata, func(n int) { metadata.Topics = make([]kmsg.MetadataRequestTopic, n) }, 18},
		}
		for _, sh := range shapes {
			for _, size := range []int{4 << 20, 256 << 10} {
				body := repeatedEntries(sh.req, sh.fill, size/sh.wire)
				var answered atomic.Int32
				t.Run(fmt.Sprintf("%s %d KiB", sh.name, len(body)>>10), func(t *testing.T) {
					g.underAttack(t, func() {
						parallel(4*n, func(i int) {
							if g.exchangeFrom(t, []string{attacker, attacker2}[i%2], sh.req.Key(), sh.req.GetVersion(), body, time.Minute) != nil {
								answered.Add(1)
							}
						})
					})
					t.Logf("%d of %d answered", answered.Load(), 4*n)
				})
			}
		}
	})

	// Class 9 (issue 25): 40 connections announcing 32 MiB frames, sending 1 MiB and
	// stalling. Before, each frame's whole buffer was allocated on its announcement: 60 to 100
	// such connections with 100 MiB frames took the gateway to 6–7 GiB.
	t.Run("slow senders of large frames", func(t *testing.T) {
		g.underAttack(t, func() {
			var conns []*rawConn
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			for i := range 40 * n {
				c, err := dialFrom([]string{attacker, attacker2}[i%2], g.gw.Addr)
				if err != nil {
					t.Error(err)
					return
				}
				conns = append(conns, c)
				c.nc.Write(binary.BigEndian.AppendUint32(nil, largeFrame))
				c.nc.SetWriteDeadline(time.Now().Add(time.Second)) // those waiting for memory read nothing
				c.nc.Write(make([]byte, 1<<20))
			}
			time.Sleep(readTimeout / 2) // the stall, while the health client asks
		})
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

// repeatedEntries is the body of req with n empty entries in the array fill sets, built by
// repeating the bytes of one entry rather than encoding n Go structs (10 million of them
// would take the test gigabytes).
func repeatedEntries(req kmsg.Request, fill func(n int), n int) []byte {
	fill(1)
	one := req.AppendTo(nil)
	fill(2)
	two := req.AppendTo(nil)
	fill(0)
	d := 0 // the count's last byte: the first that differs
	for one[d] == two[d] {
		d++
	}
	entry := two[d+1 : d+1+len(two)-len(one)]
	start := d - 3
	var count []byte
	if req.IsFlexible() {
		start, count = d, binary.AppendUvarint(nil, uint64(n+1))
	} else {
		count = binary.BigEndian.AppendUint32(nil, uint32(n))
	}
	body := append(append([]byte{}, one[:start]...), count...)
	body = append(body, bytes.Repeat(entry, n)...)
	return append(body, one[d+1+len(entry):]...)
}
