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

// countingObserver counts frames read.
type countingObserver struct {
	nopObserver
	read atomic.Int32
}

func (o *countingObserver) RequestRead(string, int) { o.read.Add(1) }

// produceWith is a Produce request whose records are size bytes of b, so its frame is read
// into a pooled buffer.
func produceWith(b byte, size int) *kmsg.ProduceRequest {
	req := produceReq("t", true)
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = bytes.Repeat([]byte{b}, size)
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, p)
	return req
}

// sendDistinctProduces sends n Produce requests in pooled frames, request i carrying
// MinSize+i bytes of byte(i) each answered before the next.
func sendDistinctProduces(c *client, n int) {
	for i := range n {
		c.send(produceWith(byte(i), bufpool.MinSize+i), int32(i+1))
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 9
		c.readResponse(resp)
	}
}

func recordsOf(req kmsg.Request) []byte {
	return req.(*kmsg.ProduceRequest).Topics[0].Partitions[0].Records
}

// A reusable frame goes back to the pool only once its handler has returned: the request's
// bytes stay intact while later frames are read.
func TestReusableFrameKeptUntilHandlerReturns(t *testing.T) {
	obs := &countingObserver{}
	hold := make(chan struct{})
	var bad atomic.Value
	calls := 0 // ordered handler: one call at a time, in request order
	serve := func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		want := "abcd"[calls]
		if calls++; calls == 1 {
			<-hold // the later frames are read meanwhile
		}
		if rec := recordsOf(req); !bytes.Equal(rec, bytes.Repeat([]byte{want}, len(rec))) {
			bad.Store(fmt.Sprintf("request %q changed under its handler: starts with %q", want, rec[:1]))
		}
		return req.ResponseKind(), nil
	}
	s := startServer(t, routes{0: {3, 9, Handler{Serve: serve, FrameReusable: true}}}, func(c *Config) {
		c.Observer = obs
		c.MaxInFlight = 4
	})
	c := dial(t, s.addr)
	for i, b := range []byte("abcd") {
		c.send(produceWith(b, 2*bufpool.MinSize), int32(i+1))
	}
	waitFor(t, func() bool { return obs.read.Load() == 4 })
	close(hold)
	c.readInOrder(kmsg.Produce, kmsg.Produce, kmsg.Produce, kmsg.Produce)
	if msg := bad.Load(); msg != nil {
		t.Fatal(msg)
	}
}

// Frames of handlers that do not say they are reusable are never reused: a handler may keep
// referring to its request (group state keeps member metadata, for one).
func TestFramesKeptByTheirHandler(t *testing.T) {
	var mu sync.Mutex
	var kept [][]byte
	serve := func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		mu.Lock()
		kept = append(kept, recordsOf(req)) // no copy: it aliases the frame
		mu.Unlock()
		return req.ResponseKind(), nil
	}
	s := startServer(t, routes{0: {3, 9, Handler{Serve: serve}}}, nil)
	sendDistinctProduces(dial(t, s.addr), 40)
	time.Sleep(10 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for i, rec := range kept {
		if !bytes.Equal(rec, bytes.Repeat([]byte{byte(i)}, bufpool.MinSize+i)) {
			t.Fatalf("request %d's bytes changed after later requests", i)
		}
	}
}

// A FrameReusable handler that takes its frame (TakeFrame) owns it: the listener does not
// reuse it for later requests. Others get nil, and a frame is taken once.
func TestTakenFrameIsNotReused(t *testing.T) {
	var mu sync.Mutex
	var kept [][]byte
	var bad atomic.Value
	serve := func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		frame := TakeFrame(ctx)
		if frame == nil || TakeFrame(ctx) != nil {
			bad.Store("a reusable pooled frame was not taken exactly once")
		}
		mu.Lock()
		kept = append(kept, recordsOf(req)) // aliases the taken frame
		mu.Unlock()
		return req.ResponseKind(), nil
	}
	s := startServer(t, routes{0: {3, 9, Handler{Serve: serve, FrameReusable: true}}}, nil)
	sendDistinctProduces(dial(t, s.addr), 40)
	if msg := bad.Load(); msg != nil {
		t.Fatal(msg)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, rec := range kept {
		if !bytes.Equal(rec, bytes.Repeat([]byte{byte(i)}, bufpool.MinSize+i)) {
			t.Fatalf("request %d's taken frame was reused by a later request", i)
		}
	}

	// Not FrameReusable: nothing to take.
	got := make(chan []byte, 1)
	s2 := startServer(t, routes{0: {3, 9, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		got <- TakeFrame(ctx)
		return req.ResponseKind(), nil
	}}}}, nil)
	c2 := dial(t, s2.addr)
	c2.send(produceWith(1, 2*bufpool.MinSize), 1)
	if f := <-got; f != nil {
		t.Fatal("TakeFrame gave the frame of a handler that is not FrameReusable")
	}
	if TakeFrame(context.Background()) != nil {
		t.Fatal("TakeFrame outside a request returned a frame")
	}
}
