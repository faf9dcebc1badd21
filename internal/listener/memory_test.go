package listener

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"net"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
	"github.com/iggygw/iggy-gateway-kafka/internal/versions"
)

// arrayPath is a field path to an array of a request type: field indices from the request
// struct down, through one entry of every enclosing array.
type arrayPath struct {
	name string
	path []int
	wire int // wire bytes of one zero-valued entry at the version measured
}

// requestArrays lists every array of req's type that req's version encodes.
func requestArrays(req kmsg.Request) []arrayPath {
	var out []arrayPath
	var walk func(v reflect.Value, name string, path []int)
	walk = func(v reflect.Value, name string, path []int) {
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() {
				continue
			}
			p := append(slices.Clone(path), i)
			n := name + "." + v.Type().Field(i).Name
			switch {
			case f.Kind() == reflect.Slice && f.Type().Elem().Kind() != reflect.Uint8:
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
				one := len(req.AppendTo(nil))
				f.Set(reflect.MakeSlice(f.Type(), 2, 2))
				wire := len(req.AppendTo(nil)) - one
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
				if wire > 0 {
					out = append(out, arrayPath{name: n, path: p, wire: wire})
					if f.Type().Elem().Kind() == reflect.Struct {
						walk(f.Index(0), n, p)
					}
				}
				f.Set(reflect.Zero(f.Type()))
			case f.Kind() == reflect.Struct:
				walk(f, n, p)
			case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
				f.Set(reflect.New(f.Type().Elem()))
				walk(f.Elem(), n, p)
				f.Set(reflect.Zero(f.Type()))
			}
		}
	}
	walk(reflect.ValueOf(req).Elem(), "", nil)
	return out
}

// withArray is a fresh request of req's key and version whose array at a holds n zero-valued
// entries, every enclosing array one.
func withArray(req kmsg.Request, a arrayPath, n int) kmsg.Request {
	fresh := kmsg.RequestForKey(req.Key())
	fresh.SetVersion(req.GetVersion())
	v := reflect.ValueOf(fresh).Elem()
	for i, idx := range a.path {
		f := v.Field(idx)
		switch {
		case i == len(a.path)-1:
			f.Set(reflect.MakeSlice(f.Type(), n, n))
		case f.Kind() == reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			v = f.Index(0)
		case f.Kind() == reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
			v = f.Elem()
		default:
			v = f
		}
	}
	return fresh
}

// filledBody is a request body of about size bytes whose array a holds as many zero-valued
// entries as fit: the well-formed shape that decodes into the most memory per wire byte.
func filledBody(req kmsg.Request, a arrayPath, size int) []byte {
	return withArray(req, a, max(size/a.wire, 1)).AppendTo(nil)
}

// countBody is a body of about size bytes whose array a announces count entries, followed by
// zero bytes: kmsg allocates the array once the count passes its size check, before finding
// that the entries are not there.
func countBody(req kmsg.Request, a arrayPath, size int, perEntry int) []byte {
	empty := withArray(req, a, 0).AppendTo(nil)
	one := withArray(req, a, 1).AppendTo(nil)
	d := 0
	for d < len(empty) && d < len(one) && empty[d] == one[d] {
		d++
	}
	start, width := d-3, 4
	if req.IsFlexible() {
		start, width = d, 1
	}
	rest := len(empty) - start - width + max(size-len(empty), 0)
	count := rest / perEntry
	body := slices.Clone(empty[:start])
	if req.IsFlexible() {
		body = binary.AppendUvarint(body, uint64(count+1))
	} else {
		body = binary.BigEndian.AppendUint32(body, uint32(count))
	}
	body = append(body, empty[start+width:]...)
	return append(body, make([]byte, max(size-len(empty), 0))...)
}

// frameOf is the request frame (without its length) of a body.
func frameOf(req kmsg.Request, body []byte) []byte {
	f := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	f = binary.BigEndian.AppendUint16(f, uint16(req.GetVersion()))
	f = binary.BigEndian.AppendUint32(f, 1)
	f = binary.BigEndian.AppendUint16(f, 0xffff) // null client id
	if req.IsFlexible() {
		f = append(f, 0)
	}
	return append(f, body...)
}

// decodeAllocation is what decodeBody allocates for body (the listener's whole decode: the
// decode, the trailing-bytes probe and the count check). Under the race detector the
// compiler does not merge kmsg's append(a[:0], make([]T, n)...) into one allocation, so every
// array is allocated twice there; the figure is halved to be what a production build
// allocates.
func decodeAllocation(req kmsg.Request, body []byte) int64 {
	if testutil.RaceEnabled {
		return rawDecodeAllocation(req, body) / 2
	}
	return rawDecodeAllocation(req, body)
}

func rawDecodeAllocation(req kmsg.Request, body []byte) int64 {
	fresh := kmsg.RequestForKey(req.Key())
	fresh.SetVersion(req.GetVersion())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_ = decodeBody(fresh, body)
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(fresh)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// The cost reserved before decoding (decodeCost) bounds what decoding allocates, for every
// array of every request the gateway serves, at its lowest and highest version, in the two
// shapes that amplify: an array filled with zero-valued entries (issue 25's Produce of
// millions of empty topics, Fetch topics and partitions, ListOffsets, OffsetCommit,
// DescribeConfigs, Metadata...), and a count that announces as many entries as kmsg's size
// check lets through, with nothing behind it (kmsg allocates the array before it reads an
// entry).
func TestDecodeEstimateBoundsAllocation(t *testing.T) {
	const filled, counted = 256 << 10, 16 << 10
	worst := map[string]float64{}
	var closest float64 // the largest share of its estimate a shape allocated
	for _, api := range versions.All() {
		for _, version := range []int16{api.Min, api.Max} {
			req := kmsg.RequestForKey(api.Key)
			if req == nil {
				continue
			}
			req.SetVersion(version)
			for _, a := range requestArrays(req) {
				check := func(shape string, body []byte) {
					frame := frameOf(req, body)
					got, bound := decodeAllocation(req, body), decodeCost(api.Key, version, frame)
					if got > bound {
						t.Errorf("%s v%d %s, %s: %d-byte body allocated %d bytes, estimate %d", api.Name, version, a.name, shape, len(body), got, bound)
					}
					closest = max(closest, float64(got)/float64(bound))
					if r := float64(got) / float64(len(frame)); r > worst[api.Name] {
						worst[api.Name] = r
					}
				}
				check("filled", filledBody(req, a, filled))
				for per := 1; per <= min(a.wire, 24); per++ {
					check(fmt.Sprintf("count at %d bytes per entry", per), countBody(req, a, counted, per))
				}
			}
		}
	}
	names := slices.Sorted(maps.Keys(worst))
	for _, n := range names {
		t.Logf("%s: decoding allocated up to %.0f bytes per frame byte", n, worst[n])
	}
	t.Logf("the closest shape allocated %.0f%% of its estimate", 100*closest)
}

// Produce is walked, not estimated from its size: a request of a few large batches costs
// about nothing beyond its frame, one of empty topic entries what those decode into, so the
// 10 million empty topics of issue 25 (30 MB) are refused at the default limits before
// decoding, while a 100 MiB Produce of records is not.
func TestProduceDecodeCost(t *testing.T) {
	big := produceWith('x', 64<<20)
	big.SetVersion(9)
	frame := frameOf(big, big.AppendTo(nil))
	if cost := decodeCost(kmsg.Produce.Int16(), 9, frame); cost > 4<<10 {
		t.Errorf("a Produce of 64 MiB of records costs %d bytes to decode", cost)
	}
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(9)
	a := requestArrays(req)[0]
	if a.name != ".Topics" {
		t.Fatalf("first array %s", a.name)
	}
	const entries = 100_000
	small := withArray(req, a, entries)
	body := small.AppendTo(nil)
	got, bound := decodeAllocation(small, body), decodeCost(kmsg.Produce.Int16(), 9, frameOf(small, body))
	if got > bound || bound > 3*got {
		t.Errorf("%d empty topics: allocated %d, estimate %d (want an estimate within 3×)", entries, got, bound)
	}
	// 10 million empty topics: ~30 MB on the wire, gigabytes decoded.
	perEntry := float64(bound) / entries
	if huge := perEntry * 10_000_000; huge < 1<<30 {
		t.Errorf("10 million empty topics estimated at %.0f bytes, under the default 256 MiB a request may hold", huge)
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

// refusalObserver records refusals.
type refusalObserver struct {
	nopObserver
	mu      sync.Mutex
	refused []Refusal
}

func (o *refusalObserver) Refused(_ string, r Refusal) {
	o.mu.Lock()
	o.refused = append(o.refused, r)
	o.mu.Unlock()
}

// A request whose decoding could allocate more than one request may hold is refused before
// it is decoded, and its connection closed (issue 25: it was decoded on a reservation clamped
// to the limit, into gigabytes); a Produce of as many bytes of records is served, and so is
// another client.
func TestRequestBeyondDecodeLimitRefused(t *testing.T) {
	obs := &refusalObserver{}
	served := atomic.Int32{}
	serve := func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		served.Add(1)
		return req.ResponseKind(), nil
	}
	budget := NewBudget(8 << 20)
	budget.SetAddressShare(2 << 20)
	s := startServer(t, routes{0: {3, 9, Handler{Serve: serve}}}, func(c *Config) {
		c.Budget, c.MaxFrameSize, c.Observer = budget, 4<<20, obs
	})
	empties := kmsg.NewPtrProduceRequest()
	empties.SetVersion(9)
	empties.Topics = make([]kmsg.ProduceRequestTopic, 100_000) // ~300 KB, ~7 MB decoded
	hostile := dial(t, s.addr)
	hostile.send(empties, 1)
	hostile.expectClosed()
	if served.Load() != 0 {
		t.Fatal("the refused request reached its handler")
	}
	obs.mu.Lock()
	refused := slices.Clone(obs.refused)
	obs.mu.Unlock()
	if !slices.Equal(refused, []Refusal{RefusedRequestMemory}) {
		t.Errorf("refusals %v, want one %s", refused, RefusedRequestMemory)
	}
	records := dial(t, s.addr)
	records.send(produceWith('r', 1<<20+1<<19), 2) // 1.5 MiB of records under a 2 MiB share
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 9
	if corr := records.readResponse(resp); corr != 2 {
		t.Fatal(corr)
	}
	waitFor(t, func() bool { budget.mu.Lock(); defer budget.mu.Unlock(); return budget.avail == budget.max })
}

// Frames growing on several connections that together hold the whole budget do not wait on
// each other for good: a growth that waits longer than ReadTimeout closes its connection, and
// the others complete (seen in the hostile test: four 32 MiB frames in a 64 MiB budget
// stalled for good).
func TestGrowingFramesDoNotDeadlock(t *testing.T) {
	budget := NewBudget(4 << 20)
	s := startServer(t, routes{0: {3, 9, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		return req.ResponseKind(), nil
	}}}}, func(c *Config) {
		c.Budget, c.MaxFrameSize, c.ReadTimeout = budget, 8<<20, 500*time.Millisecond
	})
	const conns = 4
	var answered, stuck atomic.Int32
	var wg sync.WaitGroup
	for i := range conns {
		c := dial(t, s.addr)
		frame := kmsg.NewRequestFormatter().AppendRequest(nil, produceWith(byte(i), 4<<20-512), int32(i+1))
		wg.Go(func() {
			// The client's own deadline is far beyond the server's ReadTimeout: reaching it
			// means the server neither answered nor closed, the frames waited for good. Which
			// of them are answered and which closed depends on timing (frames that reached
			// the deadlock together time out together), so only that is asserted.
			c.nc.SetDeadline(time.Now().Add(20 * time.Second))
			_, err := c.nc.Write(frame)
			if err == nil {
				var size [4]byte
				if _, err = io.ReadFull(c.nc, size[:]); err == nil {
					answered.Add(1)
				}
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				stuck.Add(1)
			}
		})
	}
	wg.Wait()
	if stuck.Load() > 0 {
		t.Fatalf("%d connections neither answered nor closed: the growing frames waited on each other", stuck.Load())
	}
	t.Logf("%d of %d answered, the others closed", answered.Load(), conns)
	waitFor(t, func() bool { budget.mu.Lock(); defer budget.mu.Unlock(); return budget.avail == budget.max })
}

// panickyObserver panics in RequestRead or Refused while armed, as a bug in code the read loop
// calls would.
type panickyObserver struct {
	nopObserver
	onRead, onRefused atomic.Bool
}

func (o *panickyObserver) RequestRead(string, int) {
	if o.onRead.Load() {
		panic("injected read panic")
	}
}

func (o *panickyObserver) Refused(string, Refusal) {
	if o.onRefused.Load() {
		panic("injected refusal panic")
	}
}

func panicsOf(component string) int64 {
	for _, c := range supervise.Panics() {
		if c.Component == component {
			return c.Panics
		}
	}
	return 0
}

// A panic in the read loop, before the request it read has a slot or after, ends that one
// connection: the panic is counted and logged, the request's reservation goes back to the
// budget, and other connections are served.
func TestReadLoopPanicReleasesTheReservation(t *testing.T) {
	obs := &panickyObserver{}
	serve := func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		return req.ResponseKind(), nil
	}
	budget := NewBudget(64 << 20)
	s := startServer(t, routes{0: {3, 9, Handler{Serve: serve}}}, func(c *Config) {
		c.Budget, c.MaxFrameSize, c.Observer = budget, 4<<20, obs
	})
	full := func() bool { budget.mu.Lock(); defer budget.mu.Unlock(); return budget.avail == budget.max }
	for _, tt := range []struct {
		name string
		arm  *atomic.Bool
		send func(c *client)
	}{
		{"before the slot", &obs.onRead, func(c *client) { c.send(produceWith('p', 1<<20+1<<19), 1) }},
		{"after the slot", &obs.onRefused, func(c *client) {
			req := kmsg.NewPtrProduceRequest()
			req.SetVersion(2) // below the versions served: refused after the slot is made
			c.send(req, 1)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := panicsOf("listener_reader")
			tt.arm.Store(true)
			c := dial(t, s.addr)
			tt.send(c)
			c.expectClosed()
			tt.arm.Store(false)
			if got := panicsOf("listener_reader"); got != before+1 {
				t.Errorf("panics %d, want %d", got, before+1)
			}
			waitFor(t, full)
			other := dial(t, s.addr)
			other.send(produceWith('o', 1<<10), 2)
			resp := kmsg.NewPtrProduceResponse()
			resp.Version = 9
			if corr := other.readResponse(resp); corr != 2 {
				t.Fatal(corr)
			}
			waitFor(t, full)
		})
	}
	if !strings.Contains(s.logs.String(), "recovered from a panic") {
		t.Error("the panic was not logged")
	}
}
