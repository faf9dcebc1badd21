package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// heldSends holds the first send to partition 0 until released, and reports every send as it
// reaches Iggy.
type heldSends struct {
	iggy.API
	release chan struct{}
	sends   chan string // "partition:first value"
	once    sync.Once
}

func (h *heldSends) SendBatch(ctx context.Context, stream, topic iggy.Identifier, partition uint32, b *iggy.Batch) (iggy.SendConfirmation, error) {
	first := false
	if partition == 0 {
		h.once.Do(func() { first = true })
	}
	h.sends <- fmt.Sprintf("%d:%s", partition, firstPayload(b))
	if first {
		select {
		case <-h.release:
		case <-ctx.Done():
			return iggy.SendConfirmation{}, ctx.Err()
		}
	}
	return h.API.SendBatch(ctx, stream, topic, partition, b)
}

// firstPayload is the payload of a batch's first message.
func firstPayload(b *iggy.Batch) string {
	var payload string
	h, rec, _, err := wire.SplitBatch(b.Bytes())
	if err == nil {
		_ = wire.WalkFrames(&h, rec, false, func(f wire.Frame) error {
			if payload == "" {
				payload = string(f.Payload)
			}
			return nil
		})
	}
	return payload
}

// produceParts is a Produce request writing one record of the given value to each partition.
func produceParts(t *testing.T, topic string, parts map[int32]string) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 10_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	for p := range int32(len(parts)) {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = p, testutil.ProduceBatch(t, 0, [][]byte{[]byte(parts[p])}, nil)
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// Produce requests of one connection overlap (the second is converted and its other
// partitions written while the first one's send is still in flight), yet two requests to one
// partition land in request order, and a later Fetch on the connection sees both.
func TestPipelinedProducesKeepPartitionOrder(t *testing.T) {
	h := &heldSends{release: make(chan struct{}), sends: make(chan string, 16)}
	g := startGateway(t, gatewayOpts{bridge: true, wrap: func(a iggy.API) iggy.API { h.API = a; return h }})
	g.mkTopic("kafka", "order", 2)
	c := dialRaw(t, g.addr)
	c.send(produceParts(t, "order", map[int32]string{0: "first"}), 1)
	c.send(produceParts(t, "order", map[int32]string{0: "second", 1: "other"}), 2)
	c.send(testutil.FetchPartitionsReq(12, "order", 0, 0), 3)

	next := func() string {
		select {
		case s := <-h.sends:
			return s
		case <-time.After(5 * time.Second):
			t.Fatal("no send reached Iggy")
			return ""
		}
	}
	// The first request's send to partition 0 is held: the second request must still get to
	// its partition 1 (in either order with the held send), and must not send to partition 0
	// before the held send is done.
	if got := []string{next(), next()}; !slices.Contains(got, "0:first") || !slices.Contains(got, "1:other") {
		t.Fatalf("first sends %q, want the first request's partition 0 and the second's partition 1", got)
	}
	// The second request queued all its sends before it sent to partition 1: its send to
	// partition 0 waits on its lane for the held one, so it cannot have reached Iggy (and it
	// must follow once the held one is done, below).
	select {
	case s := <-h.sends:
		t.Fatalf("sent %q while the earlier send to partition 0 was still in flight", s)
	default:
	}
	close(h.release)
	if s := next(); s != "0:second" {
		t.Fatalf("third send %q", s)
	}

	for _, want := range []struct {
		corr int32
		base int64
	}{{1, 0}, {2, 1}} {
		f := c.frame()
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 9
		if err := resp.ReadFrom(f[5:]); err != nil {
			t.Fatal(err)
		}
		if corr := int32(binary.BigEndian.Uint32(f)); corr != want.corr {
			t.Fatalf("response for %d, want %d", corr, want.corr)
		}
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.BaseOffset != want.base {
			t.Fatalf("request %d: partition 0 code %d base offset %d, want %d", want.corr, p.ErrorCode, p.BaseOffset, want.base)
		}
	}
	f := c.frame()
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 12
	if err := resp.ReadFrom(f[5:]); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range fetchedRecords(t, &resp.Topics[0].Partitions[0]) {
		got = append(got, string(r.Value))
	}
	if fmt.Sprint(got) != "[first second]" {
		t.Fatalf("partition 0 holds %v, want [first second]", got)
	}
}

// Several connections each pipeline many Produce requests to several partitions: every
// record lands, and each connection's records reach each partition in request order. The
// request frames are pooled and reused, so a frame reused too early would show up here as a
// wrong value too.
func TestPipelinedProducesManyConnections(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	const conns, requests, partitions, perBatch = 3, 20, 3, 3
	g.mkTopic("kafka", "many", partitions)
	value := func(c, r, p, i int) []byte {
		v := []byte(fmt.Sprintf("c%d r%02d p%d i%d ", c, r, p, i))
		return append(v, bytes.Repeat([]byte{byte('a' + c)}, 6000)...)
	}
	var wg sync.WaitGroup
	for ci := range conns {
		c := dialRaw(t, g.addr)
		wg.Go(func() {
			for r := range requests {
				req := kmsg.NewPtrProduceRequest()
				req.Version, req.Acks, req.TimeoutMillis = 9, -1, 10_000
				rt := kmsg.NewProduceRequestTopic()
				rt.Topic = "many"
				for p := range partitions {
					values := make([][]byte, perBatch)
					for i := range values {
						values[i] = value(ci, r, p, i)
					}
					rp := kmsg.NewProduceRequestTopicPartition()
					rp.Partition, rp.Records = int32(p), testutil.ProduceBatch(t, 0, values, nil)
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
				if err := c.write(req, int32(r)); err != nil {
					t.Errorf("conn %d: %v", ci, err)
					return
				}
			}
			for r := range requests {
				f, err := c.readFrame()
				resp := kmsg.NewPtrProduceResponse()
				resp.Version = 9
				if err != nil || f == nil || resp.ReadFrom(f[5:]) != nil || int32(binary.BigEndian.Uint32(f)) != int32(r) {
					t.Errorf("conn %d: bad response %d", ci, r)
					return
				}
				for _, p := range resp.Topics[0].Partitions {
					if p.ErrorCode != 0 {
						t.Errorf("conn %d request %d partition %d: code %d", ci, r, p.Partition, p.ErrorCode)
					}
				}
			}
		})
	}
	wg.Wait()
	for p := range int32(partitions) {
		next := make([]int, conns) // next record index expected from each connection
		for offset := int64(0); ; {
			resp := g.fetchResp(t, ctxT(t), testutil.FetchPartitionsReq(12, "many", offset, p))
			recs := fetchedRecords(t, &resp.Topics[0].Partitions[0])
			if len(recs) == 0 {
				break
			}
			for _, rec := range recs {
				var c, r, rp, i int
				if _, err := fmt.Sscanf(string(rec.Value), "c%d r%d p%d i%d ", &c, &r, &rp, &i); err != nil || c >= conns {
					t.Fatalf("partition %d offset %d: unreadable value %.20q", p, rec.Offset, rec.Value)
				}
				if got := r*perBatch + i; rp != int(p) || got != next[c] || !bytes.Equal(rec.Value, value(c, r, rp, i)) {
					t.Fatalf("partition %d offset %d: conn %d record %d (partition %d), want record %d", p, rec.Offset, c, got, rp, next[c])
				}
				next[c]++
				offset = rec.Offset + 1
			}
		}
		for c, n := range next {
			if n != requests*perBatch {
				t.Fatalf("partition %d holds %d records of conn %d, want %d", p, n, c, requests*perBatch)
			}
		}
	}
}
