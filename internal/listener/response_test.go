package listener

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/bufpool"
)

// pooledFetch answers a Fetch with records of the byte seed (the request's MaxBytes) taken
// from the shared pool, as the broker does. Release poisons the records before returning
// them: if the writer encoded the response after Release, the client would see the poison.
type pooledFetch struct {
	size     int
	spliced  bool // encode with AppendSpliced, the records written from their own buffer
	released atomic.Int32
	served   atomic.Int32
}

const poison = 0xEE

func (p *pooledFetch) serve(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
	seed := byte(req.(*kmsg.FetchRequest).MaxBytes)
	records := bufpool.Get(p.size)[:p.size]
	for i := range records {
		records[i] = seed
	}
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	t := kmsg.NewFetchResponseTopic()
	t.Topic = "t"
	part := kmsg.NewFetchResponseTopicPartition()
	part.RecordBatches = records
	t.Partitions = append(t.Partitions, part)
	resp.Topics = append(resp.Topics, t)
	p.served.Add(1)
	out := &Response{Response: resp, SizeHint: p.size + 1024, Release: func() {
		for i := range records {
			records[i] = poison
		}
		bufpool.Put(records)
		p.released.Add(1)
	}}
	if p.spliced {
		out.AppendSpliced = spliceRecords(resp, records)
	}
	return out, nil
}

// spliceRecords is a spliced encoder of resp that leaves records (the last byte field of
// the body, of bytes no header byte after it equals) out of the buffer, in two splices.
func spliceRecords(resp kmsg.Response, records []byte) func([]byte, []Splice) ([]byte, []Splice) {
	return func(dst []byte, splices []Splice) ([]byte, []Splice) {
		body := resp.AppendTo(nil)
		at := bytes.LastIndex(body, records)
		half := len(records) / 2
		dst = append(dst, body[:at]...)
		splices = append(splices, Splice{At: len(dst), Data: records[:half]}, Splice{At: len(dst), Data: records[half:]})
		return append(dst, body[at+len(records):]...), splices
	}
}

func fetchRequest(seed byte) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.MaxBytes = int32(seed)
	return req
}

// Responses whose buffers go back to the shared pool arrive intact, on several connections
// at once, whatever their size relative to the connection's own write buffer.
// Spliced responses (AppendSpliced, written with writev) are released only after the write.
func TestPooledResponsesArriveIntact(t *testing.T) {
	for _, spliced := range []bool{false, true} {
		for _, size := range []int{100, maxRetainedWriteBuffer + 1, 3 << 20} {
			t.Run(fmt.Sprintf("spliced=%v/%d", spliced, size), func(t *testing.T) {
				testPooledResponses(t, &pooledFetch{size: size, spliced: spliced})
			})
		}
	}
}

func testPooledResponses(t *testing.T, h *pooledFetch) {
	size := h.size
	s := startServer(t, routes{1: {4, 12, Handler{Serve: h.serve, Concurrent: true}}}, func(c *Config) { c.MaxFrameSize = 8 << 20 })
	const conns, perConn = 3, 12
	var wg sync.WaitGroup
	for ci := range conns {
		c := dial(t, s.addr)
		wg.Go(func() {
			for i := range perConn {
				seed := byte(ci*perConn + i + 1)
				c.send(fetchRequest(seed), int32(i))
			}
			for i := range perConn {
				seed := byte(ci*perConn + i + 1)
				resp := kmsg.NewPtrFetchResponse()
				resp.Version = 12
				if corr := c.readResponse(resp); corr != int32(i) {
					t.Errorf("conn %d: corr %d, want %d", ci, corr, i)
					return
				}
				got := resp.Topics[0].Partitions[0].RecordBatches
				if len(got) != size || !bytes.Equal(got, bytes.Repeat([]byte{seed}, size)) {
					t.Errorf("conn %d response %d: %d bytes, not all %#x (first %#x)", ci, i, len(got), seed, got[0])
					return
				}
			}
		})
	}
	wg.Wait()
	waitFor(t, func() bool { return h.released.Load() == conns*perConn })
}

// A response that is never written (the connection was torn down while its handler ran) is
// released all the same, once.
func TestAbandonedResponseIsReleased(t *testing.T) {
	h := &pooledFetch{size: 1 << 20}
	entered := make(chan struct{})
	serve := func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		close(entered)
		<-ctx.Done() // the connection is being torn down
		return h.serve(ctx, cc, req)
	}
	s := startServer(t, routes{1: {4, 12, Handler{Serve: serve}}}, nil)
	c := dial(t, s.addr)
	c.send(fetchRequest(1), 1)
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); err == nil {
		t.Fatal("shutdown finished although a handler was still running")
	}
	if h.served.Load() != 1 || h.released.Load() != 1 {
		t.Fatalf("served %d, released %d; want 1 and 1", h.served.Load(), h.released.Load())
	}
	c.expectClosed()
}

// A wrapper around no response sends nothing, like a nil response.
func TestEmptyResponseWrapperSendsNothing(t *testing.T) {
	released := make(chan struct{}, 2)
	d := routes{
		3: {0, 12, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
			return &Response{Release: func() { released <- struct{}{} }}, nil
		}}},
		60: {0, 1, Handler{Serve: echoDescribeCluster}},
	}
	s := startServer(t, d, nil)
	c := dial(t, s.addr)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	c.send(req, 1)
	c.send(kmsg.NewPtrDescribeClusterRequest(), 2)
	if corr := c.readResponse(kmsg.NewPtrDescribeClusterResponse()); corr != 2 {
		t.Fatalf("corr %d, want 2 (the empty wrapper must send nothing)", corr)
	}
	<-released
	if len(released) != 0 {
		t.Fatal("released twice")
	}
}
