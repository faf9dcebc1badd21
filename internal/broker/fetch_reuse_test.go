package broker

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// reuseValue is the value stored at offset of partition: its identity, then filler that
// differs per record, so a record read from a reused buffer cannot pass for the right one.
func reuseValue(partition int32, offset int64, size int) []byte {
	v := make([]byte, size)
	binary.BigEndian.PutUint32(v, uint32(partition))
	binary.BigEndian.PutUint64(v[4:], uint64(offset))
	for i := 12; i < size; i++ {
		v[i] = byte(int64(i) + offset*7 + int64(partition)*13)
	}
	return v
}

// Fetch buffers (record batches, Iggy poll replies, response buffers) are pooled across
// requests. Many fetches in flight at once, on several connections and pipelined on each,
// must each get exactly the records stored at their offsets: a buffer reused while a
// response still pointed into it would show another request's bytes.
//
// The tail cache is off: its batches (300 kB) are served whole, so partitions after the first
// would come back empty under these limits, and its batches are not pooled.
func TestConcurrentFetchesSeeTheirOwnRecords(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=0"}})
	const partitions, perPartition, size = 4, 600, 3000
	g.mkTopic("kafka", "reuse", partitions)
	for p := range int32(partitions) {
		for start := 0; start < perPartition; start += 100 {
			values := make([][]byte, 100)
			for i := range values {
				values[i] = reuseValue(p, int64(start+i), size)
			}
			if base := g.produceValues(t, "reuse", p, values...); base != int64(start) {
				t.Fatalf("partition %d: base offset %d, want %d", p, base, start)
			}
		}
	}

	const conns, rounds, pipelined = 4, 6, 4
	var wg sync.WaitGroup
	for ci := range conns {
		c := dialRaw(t, g.addr)
		wg.Go(func() {
			for r := range rounds {
				offsets := make([]int64, pipelined)
				for i := range pipelined {
					offsets[i] = int64((ci*131 + r*37 + i*59) % perPartition)
					req := testutil.FetchPartitionsReq(12, "reuse", offsets[i], 0, 1, 2, 3)
					for j := range req.Topics[0].Partitions {
						req.Topics[0].Partitions[j].PartitionMaxBytes = int32(64<<10 + i*100<<10)
					}
					if err := c.write(req, int32(i)); err != nil {
						t.Errorf("conn %d round %d: %v", ci, r, err)
						return
					}
				}
				for i := range pipelined {
					if err := checkReuseResponse(c, int32(i), offsets[i], size); err != nil {
						t.Errorf("conn %d round %d fetch %d: %v", ci, r, i, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func checkReuseResponse(c *rawConn, corr int32, offset int64, size int) error {
	f, err := c.readFrame()
	if err != nil {
		return err
	}
	if f == nil {
		return fmt.Errorf("connection closed")
	}
	if got := int32(binary.BigEndian.Uint32(f)); got != corr {
		return fmt.Errorf("correlation id %d, want %d", got, corr)
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 12
	if err := resp.ReadFrom(f[5:]); err != nil { // correlation id and empty header tags
		return err
	}
	for i := range resp.Topics[0].Partitions {
		p := &resp.Topics[0].Partitions[i]
		recs, err := testutil.DecodeFetched(p, offset)
		if err != nil {
			return err
		}
		if p.ErrorCode != 0 || len(recs) == 0 {
			return fmt.Errorf("partition %d: error %d, %d records", p.Partition, p.ErrorCode, len(recs))
		}
		for j, r := range recs {
			want := offset + int64(j)
			if r.Offset != want || !bytes.Equal(r.Value, reuseValue(p.Partition, want, size)) {
				return fmt.Errorf("partition %d record %d: offset %d, value of partition %d offset %d",
					p.Partition, j, r.Offset, binary.BigEndian.Uint32(r.Value), binary.BigEndian.Uint64(r.Value[4:]))
			}
		}
	}
	return nil
}
