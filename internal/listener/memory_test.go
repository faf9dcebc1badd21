package listener

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// hostileFrame is a request body of about size bytes whose arrays hold as many zero-valued
// entries as fit: the shape that decodes into the most memory per wire byte.
func hostileBody(req kmsg.Request, size int) []byte {
	v := reflect.ValueOf(req).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Slice && f.Type().Elem().Kind() != reflect.Uint8 && f.CanSet() {
			one := len(req.AppendTo(nil))
			f.Set(reflect.MakeSlice(f.Type(), 2, 2))
			per := len(req.AppendTo(nil)) - one
			f.Set(reflect.MakeSlice(f.Type(), 0, 0))
			if per > 0 {
				f.Set(reflect.MakeSlice(f.Type(), size/per, size/per))
				return req.AppendTo(nil)
			}
		}
	}
	return req.AppendTo(nil)
}

// The estimate reserved before decoding is an upper bound of what decoding allocates, for
// the request shapes that amplify the most.
func TestDecodeEstimateBoundsAllocation(t *testing.T) {
	for _, tc := range []struct {
		key     kmsg.Key
		version int16
	}{
		{kmsg.Metadata, 4}, {kmsg.Metadata, 12}, {kmsg.DescribeConfigs, 1}, {kmsg.DescribeConfigs, 4},
		{kmsg.ListOffsets, 1}, {kmsg.ListOffsets, 7}, {kmsg.DeleteTopics, 6}, {kmsg.OffsetFetch, 8},
		{kmsg.Produce, 9}, {kmsg.DescribeGroups, 5}, {kmsg.CreateTopics, 5},
	} {
		req := kmsg.RequestForKey(tc.key.Int16())
		req.SetVersion(tc.version)
		body := hostileBody(req, 1<<20)
		bound := int64(len(body)) * decodeAmplification(tc.key.Int16(), tc.version)
		var before, after runtime.MemStats
		fresh := kmsg.RequestForKey(tc.key.Int16())
		fresh.SetVersion(tc.version)
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := fresh.ReadFrom(body); err != nil {
			t.Fatalf("%v v%d: %v", tc.key, tc.version, err)
		}
		runtime.ReadMemStats(&after)
		allocated := int64(after.TotalAlloc - before.TotalAlloc)
		if allocated > bound {
			t.Errorf("%v v%d: %d-byte body allocated %d bytes, estimate %d", tc.key, tc.version, len(body), allocated, bound)
		}
		if measured := sizeOf(reflect.ValueOf(fresh), false); measured > bound {
			t.Errorf("%v v%d: measured %d over the estimate %d", tc.key, tc.version, measured, bound)
		}
		runtime.KeepAlive(fresh)
	}
}

func describeClusterRoute(serve func(ctx context.Context) error) routes {
	return routes{60: {0, 1, Handler{Concurrent: true, Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		if err := serve(ctx); err != nil {
			return nil, err
		}
		return req.ResponseKind(), nil
	}}}}
}

// A peer that announces a large frame and sends part of it holds only what it sent: another
// client is served meanwhile. Before, the whole announced frame was reserved at once.
func TestSlowSenderHoldsOnlyWhatItSent(t *testing.T) {
	budget := NewBudget(1 << 20)
	s := startServer(t, describeClusterRoute(func(context.Context) error { return nil }), func(c *Config) {
		c.Budget, c.MaxFrameSize = budget, 4<<20
	})
	slow := dial(t, s.addr)
	slow.write(binary.BigEndian.AppendUint32(nil, 4<<20)) // announces 4 MiB
	slow.write(make([]byte, 64<<10))                      // and sends 64 KiB
	other := dial(t, s.addr)
	other.send(kmsg.NewPtrDescribeClusterRequest(), 7)
	if corr := other.readResponse(kmsg.NewPtrDescribeClusterResponse()); corr != 7 {
		t.Fatal(corr)
	}
	slow.nc.Close()
	waitFor(t, func() bool { return s.OpenConnections() == 1 })
}

// What a handler reserves is held until its response is written.
func TestReserveHeldUntilAnswered(t *testing.T) {
	budget := NewBudget(1 << 30)
	reserved := make(chan struct{})
	proceed := make(chan struct{})
	s := startServer(t, describeClusterRoute(func(ctx context.Context) error {
		if err := Reserve(ctx, 100<<20); err != nil {
			return err
		}
		if got := ReserveUpTo(ctx, 2<<30); got >= 1<<30 {
			t.Errorf("ReserveUpTo took %d, more than was available", got)
		}
		close(reserved)
		<-proceed
		return nil
	}), func(c *Config) { c.Budget = budget })
	c := dial(t, s.addr)
	c.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	<-reserved
	budget.mu.Lock()
	avail := budget.avail
	budget.mu.Unlock()
	if avail > 1<<30-100<<20 {
		t.Errorf("available %d after reserving 100 MiB", avail)
	}
	close(proceed)
	c.readResponse(kmsg.NewPtrDescribeClusterResponse())
	waitFor(t, func() bool { budget.mu.Lock(); defer budget.mu.Unlock(); return budget.avail == budget.max })
}

func dialFrom(t *testing.T, local, addr string) *client {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("cannot dial from %s: %v", local, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc}
}

// One address that holds its whole share does not stop another address from being served.
func TestAddressShare(t *testing.T) {
	budget := NewBudget(4 << 20)
	budget.SetAddressShare(1 << 20)
	s := startServer(t, describeClusterRoute(func(context.Context) error { return nil }), func(c *Config) {
		c.Budget, c.MaxFrameSize = budget, 4<<20
	})
	for range 3 { // three slow senders from one address, each holding part of a frame
		slow := dialFrom(t, "127.0.0.1", s.addr)
		slow.write(binary.BigEndian.AppendUint32(nil, 4<<20))
		slow.write(make([]byte, 1<<20))
	}
	// Each starts in a frameChunk buffer and waits for the share to grow it.
	waitFor(t, func() bool {
		budget.mu.Lock()
		defer budget.mu.Unlock()
		return budget.max-budget.avail >= 3*frameChunk
	})
	budget.mu.Lock()
	held := budget.max - budget.avail
	budget.mu.Unlock()
	if held > 1<<20 {
		t.Fatalf("one address holds %d bytes, share is %d", held, 1<<20)
	}
	other := dialFrom(t, "127.0.0.2", s.addr)
	other.send(kmsg.NewPtrDescribeClusterRequest(), 3)
	if corr := other.readResponse(kmsg.NewPtrDescribeClusterResponse()); corr != 3 {
		t.Fatal(corr)
	}
}

func TestMaxConnectionsPerAddress(t *testing.T) {
	s := startServer(t, describeClusterRoute(func(context.Context) error { return nil }), func(c *Config) {
		c.MaxConnectionsPerAddress = 2
	})
	a, b := dial(t, s.addr), dial(t, s.addr)
	a.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	b.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	a.readResponse(kmsg.NewPtrDescribeClusterResponse())
	b.readResponse(kmsg.NewPtrDescribeClusterResponse())
	third := dial(t, s.addr)
	third.expectClosed()
	a.nc.Close()
	waitFor(t, func() bool { return s.OpenConnections() == 1 })
	again := dial(t, s.addr)
	again.send(kmsg.NewPtrDescribeClusterRequest(), 2)
	again.readResponse(kmsg.NewPtrDescribeClusterResponse())
}

// A connection that sends nothing, or only part of a first frame, is closed after
// FirstRequestTimeout, well before IdleTimeout; one that completed a request is not.
func TestFirstRequestTimeout(t *testing.T) {
	s := startServer(t, describeClusterRoute(func(context.Context) error { return nil }), func(c *Config) {
		c.FirstRequestTimeout = 200 * time.Millisecond
	})
	served := dial(t, s.addr)
	served.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	served.readResponse(kmsg.NewPtrDescribeClusterResponse())
	silent := dial(t, s.addr)
	partial := dial(t, s.addr)
	partial.write([]byte{0, 0, 0, 100, 0})
	start := time.Now()
	silent.expectClosed()
	partial.expectClosed()
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("closed after %v", d)
	}
	served.send(kmsg.NewPtrDescribeClusterRequest(), 2)
	served.readResponse(kmsg.NewPtrDescribeClusterResponse())
	if !strings.Contains(s.logs.String(), "no request within the first request timeout") {
		t.Error("close reason not logged")
	}
}

// Metadata v9+ tolerates librdkafka's 3 extra bytes (frame.go), not more.
func TestMetadataTrailingBytesBounded(t *testing.T) {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(9)
	body := req.AppendTo(nil)
	for extra, ok := range map[int]bool{0: true, 1: true, 3: true, 4: false, 1000: false} {
		fresh := kmsg.NewPtrMetadataRequest()
		fresh.SetVersion(9)
		err := decodeBody(fresh, append(append([]byte(nil), body...), make([]byte, extra)...))
		if ok != (err == nil) {
			t.Errorf("%d trailing bytes: %v", extra, err)
		}
	}
}

// A peer that announces a large frame and sends little of it makes the gateway allocate
// about what it sent, not the announced size (issue 25: 60 such connections with 100 MiB
// frames took the process to 7 GiB while the budget counted only the bytes received), and
// the budget covers the buffer that was allocated.
func TestAnnouncedFrameNotAllocatedUpFront(t *testing.T) {
	budget := NewBudget(1 << 30)
	s := startServer(t, describeClusterRoute(func(context.Context) error { return nil }), func(c *Config) {
		c.Budget, c.MaxFrameSize = budget, 64<<20
	})
	runtime.GC()
	runtime.GC() // empties bufpool: a pooled 64 MiB buffer would hide the allocation
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	slow := dial(t, s.addr)
	slow.write(binary.BigEndian.AppendUint32(nil, 64<<20)) // announces 64 MiB
	slow.write(make([]byte, 300<<10))                      // and sends 300 KiB
	held := func() int64 { budget.mu.Lock(); defer budget.mu.Unlock(); return budget.max - budget.avail }
	waitFor(t, func() bool { return held() >= 256<<10 })
	time.Sleep(50 * time.Millisecond) // let the connection block on its next read
	runtime.ReadMemStats(&after)
	if grew := int64(after.TotalAlloc - before.TotalAlloc); grew > 16<<20 {
		t.Errorf("a 64 MiB frame of which 300 KiB arrived allocated %d bytes", grew)
	}
	if h := held(); h < 512<<10 || h > 2<<20 {
		t.Errorf("budget holds %d bytes for 300 KiB read into a buffer grown to 512 KiB", h)
	}
	slow.nc.Close()
	waitFor(t, func() bool { return held() == 0 })
}

// Frames larger than the first buffer grow as they arrive and reach their handler intact,
// whatever their size against the pool's classes.
func TestGrowingFramesArriveIntact(t *testing.T) {
	var bad atomic.Value
	serve := func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		rec := recordsOf(req)
		for i, b := range rec {
			if b != byte(i%251) {
				bad.Store(fmt.Sprintf("%d-byte records differ at %d", len(rec), i))
				break
			}
		}
		return req.ResponseKind(), nil
	}
	budget := NewBudget(256 << 20)
	s := startServer(t, routes{0: {3, 9, Handler{Serve: serve, FrameReusable: true}}}, func(c *Config) {
		c.Budget, c.MaxFrameSize = budget, 80<<20
	})
	c := dial(t, s.addr)
	for i, size := range []int{frameFirstBuffer - 100, frameFirstBuffer + 1, 3<<20 + 5, 70 << 20} {
		req := produceWith(0, 0)
		rec := make([]byte, size)
		for j := range rec {
			rec[j] = byte(j % 251)
		}
		req.Topics[0].Partitions[0].Records = rec
		c.send(req, int32(i+1))
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 9
		c.readResponse(resp)
	}
	if msg := bad.Load(); msg != nil {
		t.Fatal(msg)
	}
	waitFor(t, func() bool { budget.mu.Lock(); defer budget.mu.Unlock(); return budget.avail == budget.max })
}
