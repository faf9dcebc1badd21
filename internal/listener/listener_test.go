package listener

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/loglimit"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

func echoDescribeCluster(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterID = "client=" + cc.ClientID()
	return resp, nil
}

func invalidDescribeCluster(req kmsg.Request) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ErrorCode = 42
	return resp
}

func basicRoutes() routes {
	return routes{
		60: {0, 1, Handler{Serve: echoDescribeCluster, InvalidRequest: invalidDescribeCluster}},
		3: {0, 12, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
			return req.ResponseKind(), nil
		}}},
	}
}

func TestRoundTripAndClientID(t *testing.T) {
	s := startServer(t, basicRoutes(), nil)
	c := dial(t, s.addr)
	for _, v := range []int16{0, 1} {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version = v
		c.send(req, 100+int32(v))
		resp := kmsg.NewPtrDescribeClusterResponse()
		resp.Version = v
		if corr := c.readResponse(resp); corr != 100+int32(v) {
			t.Errorf("correlation id %d", corr)
		}
		if resp.ClusterID != "client=test-client" {
			t.Errorf("cluster id %q", resp.ClusterID)
		}
	}
}

func TestFirewallCloses(t *testing.T) {
	tests := []struct {
		name  string
		frame func() []byte
	}{
		{"unknown key", func() []byte { return rawFrame(999, 0, 1, nil) }},
		{"key without handler", func() []byte { return rawFrame(1, 4, 1, []byte{0xff, 0xff}) }},
		{"version above range", func() []byte { r := kmsg.NewPtrDescribeClusterRequest(); r.Version = 2; return format(r, 1) }},
		{"negative version", func() []byte { return rawFrame(60, -1, 1, nil) }},
		{"frame shorter than header", func() []byte { return lengthPrefixed([]byte{0, 60, 0}) }},
		{"zero length", func() []byte { return []byte{0, 0, 0, 0} }},
		{"negative length", func() []byte { return []byte{0xff, 0xff, 0xff, 0xfe} }},
		{"above max frame", func() []byte { return []byte{0, 0x10, 0, 1} }},
		{"client id longer than frame", func() []byte { return rawFrame(60, 0, 1, []byte{0, 50, 'a'}) }},
		{"bad flexible header tags", func() []byte { return rawFrame(60, 0, 1, []byte{0xff, 0xff, 5, 1, 100}) }},
		{"undecodable body without error field", func() []byte { return rawFrame(3, 9, 1, []byte{0xff, 0xff, 0, 9}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, basicRoutes(), nil)
			c := dial(t, s.addr)
			c.write(tt.frame())
			c.expectClosed()
		})
	}
}

func TestResponsesBeforeRejectionAreWritten(t *testing.T) {
	s := startServer(t, basicRoutes(), nil)
	c := dial(t, s.addr)
	var frames []byte
	frames = append(frames, format(kmsg.NewPtrDescribeClusterRequest(), 1)...)
	frames = append(frames, rawFrame(999, 0, 2, nil)...)
	frames = append(frames, format(kmsg.NewPtrDescribeClusterRequest(), 3)...)
	c.write(frames)
	if corr := c.readResponse(kmsg.NewPtrDescribeClusterResponse()); corr != 1 {
		t.Fatalf("corr %d", corr)
	}
	c.expectClosed()
}

func TestInvalidRequestAndTrailingBytes(t *testing.T) {
	s := startServer(t, basicRoutes(), nil)
	c := dial(t, s.addr)
	good := kmsg.NewPtrDescribeClusterRequest()
	good.Version = 1
	trailing := append(format(good, 7), 0xAA) // one byte after the body
	binary.BigEndian.PutUint32(trailing, uint32(len(trailing)-4))
	c.write(trailing)
	resp := kmsg.NewPtrDescribeClusterResponse()
	resp.Version = 1
	if corr := c.readResponse(resp); corr != 7 || resp.ErrorCode != 42 {
		t.Fatalf("corr %d error %d, want 7 and INVALID_REQUEST", corr, resp.ErrorCode)
	}
	// A truncated body gets the same answer, and the connection stays usable.
	c.write(rawFrame(60, 0, 8, []byte{0xff, 0xff, 0}))
	resp = kmsg.NewPtrDescribeClusterResponse()
	if corr := c.readResponse(resp); corr != 8 || resp.ErrorCode != 42 {
		t.Fatalf("corr %d error %d", corr, resp.ErrorCode)
	}
	c.send(kmsg.NewPtrDescribeClusterRequest(), 9)
	resp = kmsg.NewPtrDescribeClusterResponse()
	if corr := c.readResponse(resp); corr != 9 || resp.ErrorCode != 0 {
		t.Fatalf("corr %d error %d", corr, resp.ErrorCode)
	}
}

// Handlers finish in reverse order; responses must still come in request order.
func TestPipelinedResponsesKeepRequestOrder(t *testing.T) {
	const n = 8
	var started atomic.Int32
	release := make([]chan struct{}, n)
	for i := range release {
		release[i] = make(chan struct{})
	}
	d := routes{3: {0, 12, Handler{Concurrent: true, Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		m := req.(*kmsg.MetadataRequest)
		idx := len(m.Topics)
		started.Add(1)
		<-release[idx]
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		resp.ClusterID = kmsg.StringPtr(strings.Repeat("x", idx))
		return resp, nil
	}}}}
	s := startServer(t, d, func(c *Config) { c.MaxInFlight = n })
	c := dial(t, s.addr)
	for i := range n {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		for range i {
			req.Topics = append(req.Topics, kmsg.NewMetadataRequestTopic())
		}
		c.send(req, int32(i))
	}
	waitFor(t, func() bool { return started.Load() == n }) // all run concurrently
	for i := n - 1; i >= 0; i-- {
		close(release[i])
	}
	for i := range n {
		resp := kmsg.NewPtrMetadataResponse()
		resp.Version = 12
		if corr := c.readResponse(resp); corr != int32(i) || len(*resp.ClusterID) != i {
			t.Fatalf("response %d: corr %d, cluster %q", i, corr, *resp.ClusterID)
		}
	}
}

// A non-concurrent request waits for everything before it and holds back everything after it.
func TestOrderedRequestsAreSerialised(t *testing.T) {
	synctest.Test(t, testOrderedRequestsAreSerialised)
}

// testOrderedRequestsAreSerialised runs in a synctest bubble (TestPipelinedRequests says why).
func testOrderedRequestsAreSerialised(t *testing.T) {
	var mu sync.Mutex
	var events []string
	record := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	block := make(chan struct{})
	d := routes{
		3: {0, 12, Handler{Concurrent: true, Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
			name := *req.(*kmsg.MetadataRequest).Topics[0].Topic
			record("start " + name)
			if name == "slow" {
				<-block
			}
			record("end " + name)
			return req.ResponseKind(), nil
		}}},
		60: {0, 1, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
			record("start ordered")
			time.Sleep(20 * time.Millisecond)
			record("end ordered")
			return req.ResponseKind(), nil
		}}},
	}
	_, ln := startPipeServer(t, d, func(c *Config) { c.MaxInFlight = 8 })
	t.Cleanup(func() { releaseAll(map[string]chan struct{}{"slow": block}) }) // after a failure
	c := dialPipe(t, ln)
	meta := func(name string, corr int32) {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		tp := kmsg.NewMetadataRequestTopic()
		tp.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, tp)
		c.send(req, corr)
	}
	meta("slow", 1)
	meta("fast", 2)
	c.send(kmsg.NewPtrDescribeClusterRequest(), 3)
	meta("after", 4)
	synctest.Wait() // everything that may run before the release has run
	mu.Lock()
	got := strings.Join(events, ",")
	mu.Unlock()
	if got != "start slow,start fast,end fast" && got != "start fast,end fast,start slow" && got != "start fast,start slow,end fast" {
		t.Fatalf("before release: %s", got)
	}
	close(block)
	for _, want := range []int32{1, 2, 3, 4} {
		var resp kmsg.Response = kmsg.NewPtrMetadataResponse()
		if want == 3 {
			resp = kmsg.NewPtrDescribeClusterResponse()
		} else {
			resp.SetVersion(12)
		}
		if corr := c.readResponse(resp); corr != want {
			t.Fatalf("corr %d, want %d", corr, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	tail := strings.Join(events[len(events)-5:], ",")
	if tail != "end slow,start ordered,end ordered,start after,end after" {
		t.Fatalf("events: %v", events)
	}
}

func TestNoResponseAndCloseAfterError(t *testing.T) {
	d := routes{
		3: {0, 12, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
			return nil, nil // like Produce with acks=0
		}}},
		60: {0, 1, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
			resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
			resp.ErrorCode = 58
			return resp, errors.New("authentication failed")
		}}},
	}
	s := startServer(t, d, nil)
	c := dial(t, s.addr)
	c.send(kmsg.NewPtrMetadataRequest(), 1)
	c.send(kmsg.NewPtrDescribeClusterRequest(), 2)
	resp := kmsg.NewPtrDescribeClusterResponse()
	if corr := c.readResponse(resp); corr != 2 || resp.ErrorCode != 58 {
		t.Fatalf("corr %d code %d", corr, resp.ErrorCode)
	}
	c.expectClosed()
}

func TestHandlerPanicClosesOnlyThatConnection(t *testing.T) {
	d := routes{60: {0, 1, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		if cc.ClientID() == "boom" {
			panic("bug")
		}
		return req.ResponseKind(), nil
	}}}}
	s := startServer(t, d, nil)
	c := dial(t, s.addr)
	c.write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("boom")).AppendRequest(nil, kmsg.NewPtrDescribeClusterRequest(), 1))
	c.expectClosed()
	c2 := dial(t, s.addr)
	c2.send(kmsg.NewPtrDescribeClusterRequest(), 2)
	if corr := c2.readResponse(kmsg.NewPtrDescribeClusterResponse()); corr != 2 {
		t.Fatal(corr)
	}
	if !strings.Contains(s.logs.String(), "handler panicked") {
		t.Error("panic not logged")
	}
}

// A panic while the writer encodes a response (a Fetch answer's encoder runs there) closes
// that connection, is counted, and leaves the process and other connections serving; before,
// the writer had no recovery and the panic ended the process (issue 25).
func TestWriterPanicClosesOnlyThatConnection(t *testing.T) {
	var released atomic.Int32
	d := routes{60: {0, 1, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		if cc.ClientID() == "boom" {
			return &Response{Response: req.ResponseKind(), Release: func() { released.Add(1) },
				AppendSpliced: func([]byte, []Splice) ([]byte, []Splice) { panic("encoder bug") }}, nil
		}
		return req.ResponseKind(), nil
	}}}}
	before := panicCount("listener_writer")
	s := startServer(t, d, nil)
	c := dial(t, s.addr)
	c.write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("boom")).AppendRequest(nil, kmsg.NewPtrDescribeClusterRequest(), 1))
	c.expectClosed()
	c2 := dial(t, s.addr)
	c2.send(kmsg.NewPtrDescribeClusterRequest(), 2)
	if corr := c2.readResponse(kmsg.NewPtrDescribeClusterResponse()); corr != 2 {
		t.Fatal(corr)
	}
	if got := panicCount("listener_writer") - before; got != 1 {
		t.Errorf("%d writer panics counted, want 1", got)
	}
	if !strings.Contains(s.logs.String(), "encoder bug") {
		t.Error("panic not logged")
	}
	waitFor(t, func() bool { return released.Load() == 1 })
}

func panicCount(component string) int64 {
	for _, p := range supervise.Panics() {
		if p.Component == component {
			return p.Panics
		}
	}
	return 0
}

func TestUndecodedHandler(t *testing.T) {
	d := routes{18: {0, 32767, Handler{Undecoded: true, Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = 0
		resp.ErrorCode = req.GetVersion()
		return resp, nil
	}}}}
	s := startServer(t, d, nil)
	c := dial(t, s.addr)
	c.write(rawFrame(18, 99, 5, []byte("garbage that is never decoded")))
	resp := kmsg.NewPtrApiVersionsResponse()
	if corr := c.readResponse(resp); corr != 5 || resp.ErrorCode != 99 {
		t.Fatalf("corr %d code %d", corr, resp.ErrorCode)
	}
}

func TestIdleTimeout(t *testing.T) {
	s := startServer(t, basicRoutes(), func(c *Config) { c.IdleTimeout = 100 * time.Millisecond })
	c := dial(t, s.addr)
	c.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	c.readResponse(kmsg.NewPtrDescribeClusterResponse())
	c.expectClosed()
	waitFor(t, func() bool { return s.OpenConnections() == 0 })
	if !strings.Contains(s.logs.String(), "reason=\"idle timeout\"") {
		t.Errorf("idle close not logged:\n%s", s.logs.String())
	}
}

// At MaxConnections a new connection is refused while every connection is busy (here: one
// reading a frame).
func TestMaxConnectionsRefusesWhenBusy(t *testing.T) {
	s := startServer(t, basicRoutes(), func(c *Config) { c.MaxConnections = 1 })
	busy := dial(t, s.addr)
	busy.write([]byte{0, 0, 0, 100, 0, 1}) // part of a frame
	s.waitBusy(t, 1)
	over := dial(t, s.addr)
	over.expectClosed()
	if s.OpenConnections() != 1 {
		t.Fatalf("%d connections open", s.OpenConnections())
	}
}

// At MaxConnections the connection idle longest makes room for a new one.
func TestMaxConnectionsEvictsIdle(t *testing.T) {
	s := startServer(t, basicRoutes(), func(c *Config) { c.MaxConnections = 2 })
	older := dial(t, s.addr)
	older.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	older.readResponse(kmsg.NewPtrDescribeClusterResponse())
	newer := dial(t, s.addr)
	newer.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	newer.readResponse(kmsg.NewPtrDescribeClusterResponse())
	waitFor(t, func() bool { return s.OpenConnections() == 2 })
	admitted := dial(t, s.addr)
	admitted.send(kmsg.NewPtrDescribeClusterRequest(), 2)
	admitted.readResponse(kmsg.NewPtrDescribeClusterResponse())
	older.expectClosed()
	newer.send(kmsg.NewPtrDescribeClusterRequest(), 3)
	if corr := newer.readResponse(kmsg.NewPtrDescribeClusterResponse()); corr != 3 {
		t.Fatal(corr)
	}
	waitFor(t, func() bool { return strings.Contains(s.logs.String(), evictedReason) })
}

func TestReadTimeoutMidFrame(t *testing.T) {
	s := startServer(t, basicRoutes(), func(c *Config) { c.ReadTimeout = 100 * time.Millisecond })
	c := dial(t, s.addr)
	c.write([]byte{0, 0, 0, 20, 0, 60}) // promises 20 bytes, sends 2
	c.expectClosed()
}

// Shutdown lets a request that is being handled finish and answers it, then closes.
func TestShutdownDrainsInFlight(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	d := routes{60: {0, 1, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		close(entered)
		<-release
		return req.ResponseKind(), nil
	}}}}
	s := startServer(t, d, nil)
	c := dial(t, s.addr)
	c.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	waitFor(t, func() bool { _, err := net.DialTimeout("tcp", s.addr, 100*time.Millisecond); return err != nil })
	close(release)
	if corr := c.readResponse(kmsg.NewPtrDescribeClusterResponse()); corr != 1 {
		t.Fatal(corr)
	}
	c.expectClosed()
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}

// When the drain window ends first, handlers are cancelled and connections closed.
func TestShutdownDeadlineAborts(t *testing.T) {
	running := make(chan struct{})
	d := routes{60: {0, 1, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		close(running)
		<-ctx.Done()
		return nil, ctx.Err()
	}}}}
	s := startServer(t, d, nil)
	c := dial(t, s.addr)
	c.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	<-running
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v", err)
	}
	c.expectClosed()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func format(req kmsg.Request, corr int32) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("test-client")).AppendRequest(nil, req, corr)
}

// rawFrame builds a frame from a header and arbitrary bytes after the correlation id.
func rawFrame(key, version int16, corr int32, rest []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	return lengthPrefixed(append(b, rest...))
}

func lengthPrefixed(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// With a shared budget smaller than two frames, a second connection's request is not read
// until the first one is answered and its bytes returned.
func TestBudgetHoldsBackReading(t *testing.T) {
	var started atomic.Int32
	release := make(chan struct{})
	d := routes{60: {0, 1, Handler{Concurrent: true, Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		if started.Add(1) == 1 {
			<-release
		}
		return req.ResponseKind(), nil
	}}}}
	frameLen := int64(len(format(kmsg.NewPtrDescribeClusterRequest(), 1)) - 4)
	budget := NewBudget(frameLen + frameLen/2)
	s := startServer(t, d, func(c *Config) { c.Budget = budget })
	a, b := dial(t, s.addr), dial(t, s.addr)
	a.send(kmsg.NewPtrDescribeClusterRequest(), 1)
	waitFor(t, func() bool { return started.Load() == 1 })
	b.send(kmsg.NewPtrDescribeClusterRequest(), 2)
	waitWaiters(t, budget, 1)
	if started.Load() != 1 {
		t.Fatal("second request read despite the budget")
	}
	close(release)
	a.readResponse(kmsg.NewPtrDescribeClusterResponse())
	if corr := b.readResponse(kmsg.NewPtrDescribeClusterResponse()); corr != 2 {
		t.Fatal(corr)
	}
	a.nc.Close()
	b.nc.Close()
	waitFor(t, func() bool { return s.OpenConnections() == 0 })
	if budget.avail != budget.max {
		t.Fatalf("budget leaked: %d of %d available", budget.avail, budget.max)
	}
}

type recordingObserver struct {
	mu                      sync.Mutex
	opened, closed, refused int
	read                    int
	outcomes                map[Outcome]int
	refusals                map[Refusal]int
}

func (o *recordingObserver) Refused(_ string, r Refusal) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.refusals == nil {
		o.refusals = map[Refusal]int{}
	}
	o.refusals[r]++
}

func (o *recordingObserver) ConnOpened(string)  { o.mu.Lock(); o.opened++; o.mu.Unlock() }
func (o *recordingObserver) ConnClosed(string)  { o.mu.Lock(); o.closed++; o.mu.Unlock() }
func (o *recordingObserver) ConnRefused(string) { o.mu.Lock(); o.refused++; o.mu.Unlock() }
func (o *recordingObserver) RequestRead(string, int) {
	o.mu.Lock()
	o.read++
	o.mu.Unlock()
}
func (o *recordingObserver) RequestDone(_ string, _ int16, _ time.Duration, _ int, out Outcome) {
	o.mu.Lock()
	o.outcomes[out]++
	o.mu.Unlock()
}

func TestObserverSeesEveryRequestOnce(t *testing.T) {
	obs := &recordingObserver{outcomes: map[Outcome]int{}}
	d := basicRoutes()
	d[3] = route{0, 12, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		return nil, nil
	}}}
	s := startServer(t, d, func(c *Config) { c.Observer = obs; c.MaxConnections = 1 })
	c := dial(t, s.addr)
	c.send(kmsg.NewPtrDescribeClusterRequest(), 1)     // answered
	c.send(kmsg.NewPtrMetadataRequest(), 2)            // no response
	c.write(rawFrame(60, 0, 3, []byte{0xff, 0xff, 0})) // invalid
	c.write(rawFrame(999, 0, 4, nil))                  // rejected
	c.readResponse(kmsg.NewPtrDescribeClusterResponse())
	c.readResponse(kmsg.NewPtrDescribeClusterResponse())
	c.expectClosed()
	waitFor(t, func() bool { return s.OpenConnections() == 0 })
	over := dial(t, s.addr)
	over.write([]byte{0, 0, 0, 100, 0}) // busy reading a frame: not evicted
	s.waitBusy(t, 1)
	c2 := dial(t, s.addr)
	c2.expectClosed()
	waitFor(t, func() bool { obs.mu.Lock(); defer obs.mu.Unlock(); return obs.refused == 1 })
	over.nc.Close()
	waitFor(t, func() bool { return s.OpenConnections() == 0 })
	obs.mu.Lock()
	defer obs.mu.Unlock()
	want := map[Outcome]int{Answered: 1, NoResponse: 1, Invalid: 1, Rejected: 1}
	for k, v := range want {
		if obs.outcomes[k] != v {
			t.Errorf("%s: %d, want %d (all: %v)", k, obs.outcomes[k], v, obs.outcomes)
		}
	}
	if obs.read != 4 || obs.opened != 2 || obs.closed != 2 {
		t.Errorf("read %d opened %d closed %d", obs.read, obs.opened, obs.closed)
	}
	if len(obs.refusals) != 2 || obs.refusals[RefusedUnsupported] != 1 || obs.refusals[RefusedTooManyConnections] != 1 {
		t.Errorf("refusals %v, want one unsupported request and one connection over the limit", obs.refusals)
	}
}

// Connection events are logged one line each, within the rate limit of their kind; the next
// line after a suppressed stretch says how many were suppressed.
func TestConnectionLogLinesAreRateLimited(t *testing.T) {
	logs := &testutil.SyncBuffer{}
	suppressed := make(chan string, 16)
	lim := loglimit.New(1e-9, 2, func(kind string) { suppressed <- kind }) // 2 lines, then none
	s := startServer(t, basicRoutes(), func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
		c.LogLimiter = lim
	})
	for range 3 {
		c := dial(t, s.addr)
		c.send(kmsg.NewPtrDescribeClusterRequest(), 1)
		c.readResponse(kmsg.NewPtrDescribeClusterResponse())
		c.nc.Close()
		waitFor(t, func() bool { return s.OpenConnections() == 0 })
	}
	if k := <-suppressed; k != "connection_opened" {
		t.Fatalf("suppressed %q first, want connection_opened", k)
	}
	if k := <-suppressed; k != "connection_closed" {
		t.Fatalf("suppressed %q second, want connection_closed", k)
	}
	var opened, closed int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch rec["event"] {
		case "connection_opened":
			opened++
			if rec["listener"] == nil || rec["remote"] == nil || rec["conn"] == nil {
				t.Errorf("connection line without listener, remote or conn: %s", line)
			}
		case "connection_closed":
			closed++
			if _, ok := rec["client_id"]; !ok {
				t.Errorf("close line without client_id: %s", line)
			}
		}
	}
	if opened != 2 || closed != 2 {
		t.Fatalf("%d open and %d close lines for 3 connections with a burst of 2:\n%s", opened, closed, logs.String())
	}
}

// A dispatcher or decoder that panics on a frame closes that connection only.
func TestPanicWhileParsingClosesTheConnection(t *testing.T) {
	d := panicky{basicRoutes()}
	s := startServer(t, d, nil)
	c := dial(t, s.addr)
	c.write(rawFrame(13, 0, 1, nil))
	c.expectClosed()
	c2 := dial(t, s.addr)
	c2.send(kmsg.NewPtrDescribeClusterRequest(), 2)
	if corr := c2.readResponse(kmsg.NewPtrDescribeClusterResponse()); corr != 2 {
		t.Fatal(corr)
	}
}

type panicky struct{ routes }

func (p panicky) Lookup(cc *ConnContext, key, version int16) (Handler, bool) {
	if key == 13 {
		panic("lookup bug")
	}
	return p.routes.Lookup(cc, key, version)
}

func TestPendingDropsClosedChannels(t *testing.T) {
	open1, open2 := make(chan struct{}), make(chan struct{})
	chans := []chan struct{}{closedChan, open1, closedChan, open2, closedChan}
	got := pending(chans)
	if len(got) != 2 || got[0] != open1 || got[1] != open2 {
		t.Fatalf("pending = %v", got)
	}
}

// librdkafka's all-topics Metadata v9+ request carries its null topic array as an int32 (issue
// #5049): Kafka reads it as "all topics, no auto-creation" and ignores the 3 bytes left over,
// and so does the gateway. Other requests with trailing bytes stay refused (see
// TestInvalidRequestAndTrailingBytes).
func TestLibrdkafkaAllTopicsMetadataIsAccepted(t *testing.T) {
	seen := make(chan *kmsg.MetadataRequest, 1)
	d := routes{3: {0, 12, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		seen <- req.(*kmsg.MetadataRequest)
		return req.ResponseKind(), nil
	}}}}
	s := startServer(t, d, nil)
	c := dial(t, s.addr)
	header := []byte{0, 7, 'r', 'd', 'k', 'a', 'f', 'k', 'a', 0} // client id, no header tags
	body := []byte{0, 0, 0, 0, 1, 0, 0}                          // as captured from librdkafka 2.16
	c.write(rawFrame(3, 12, 5, append(header, body...)))
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	if corr := c.readResponse(resp); corr != 5 {
		t.Fatalf("correlation id %d", corr)
	}
	req := <-seen
	if req.Topics != nil || req.AllowAutoTopicCreation {
		t.Fatalf("decoded topics %v auto-create %v, want all topics without auto-creation", req.Topics, req.AllowAutoTopicCreation)
	}
}

// When the client goes away, a request that only waits on its behalf (AbandonedOnClose) is
// cancelled at once, so a parked JoinGroup or long-poll Fetch does not hold the connection's
// goroutines to the end of its wait; any other request already read still runs to completion
// (an acks=0 Produce sent just before closing is written, as in Kafka).
func TestClientCloseAbandonsOnlyWaitingRequests(t *testing.T) {
	for _, abandoned := range []bool{true, false} {
		parked := make(chan struct{})
		cancelled := make(chan bool, 1)
		d := routes{60: {0, 1, Handler{AbandonedOnClose: abandoned, Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
			close(parked)
			select {
			case <-ctx.Done():
				cancelled <- true
			case <-time.After(300 * time.Millisecond):
				cancelled <- false
			}
			return req.ResponseKind(), nil
		}}}}
		s := startServer(t, d, nil)
		c := dial(t, s.addr)
		c.send(kmsg.NewPtrDescribeClusterRequest(), 1)
		<-parked
		c.nc.Close()
		select {
		case got := <-cancelled:
			if got != abandoned {
				t.Fatalf("AbandonedOnClose=%v: cancelled=%v when the client closed", abandoned, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("AbandonedOnClose=%v: the handler never finished", abandoned)
		}
	}
}
