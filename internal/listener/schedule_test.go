package listener

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// events records what handlers do, in order.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) add(s string) { e.mu.Lock(); e.list = append(e.list, s); e.mu.Unlock() }

func (e *events) snapshot() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.list)
}

// before reports whether a happened before b (both must have happened).
func (e *events) before(a, b string) bool {
	l := e.snapshot()
	i, j := slices.Index(l, a), slices.Index(l, b)
	return i >= 0 && j >= 0 && i < j
}

// pipelineRoutes serves Produce as a pipelined handler that records its start, calls Started
// (unless its transactional id says "nostart"), then waits for its release; Metadata as a
// concurrent handler and DescribeCluster as an ordered one, both recording start and end.
func pipelineRoutes(ev *events, release map[string]chan struct{}) routes {
	wait := func(name string) {
		if ch := release[name]; ch != nil {
			<-ch
		}
	}
	return routes{
		0: {3, 9, Handler{Pipelined: true, Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
			p := req.(*kmsg.ProduceRequest)
			name := p.Topics[0].Topic
			ev.add("start " + name)
			if p.TransactionID == nil {
				Started(ctx)
				Started(ctx) // idempotent
			}
			wait(name)
			ev.add("end " + name)
			return req.ResponseKind(), nil
		}}},
		3: {0, 12, Handler{Concurrent: true, Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
			name := *req.(*kmsg.MetadataRequest).Topics[0].Topic
			ev.add("start " + name)
			wait(name)
			ev.add("end " + name)
			return req.ResponseKind(), nil
		}}},
		60: {0, 1, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
			ev.add("start ordered")
			wait("ordered")
			ev.add("end ordered")
			return req.ResponseKind(), nil
		}}},
	}
}

// releaseAll closes the release channels not closed yet.
func releaseAll(release map[string]chan struct{}) {
	for _, ch := range release {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
}

func produceReq(topic string, started bool) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 1000
	if !started {
		req.TransactionID = kmsg.StringPtr("nostart")
	}
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	req.Topics = append(req.Topics, t)
	return req
}

func metadataReq(topic string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	return req
}

// readInOrder reads one response per request, checking the correlation ids 1..n.
func (c *client) readInOrder(kinds ...kmsg.Key) {
	c.t.Helper()
	for i, k := range kinds {
		resp := kmsg.ResponseForKey(k.Int16())
		switch k {
		case kmsg.Produce:
			resp.SetVersion(9)
		case kmsg.Metadata:
			resp.SetVersion(12)
		}
		if corr := c.readResponse(resp); corr != int32(i+1) {
			c.t.Fatalf("response %d: correlation id %d", i+1, corr)
		}
	}
}

// Pipelined requests start one after the other without waiting for each other to finish;
// every other request waits for them to finish, and they wait for earlier ones. The test runs
// in a synctest bubble over in-memory connections: after synctest.Wait every request that can
// start has started, so each step asserts exactly what ran, with no sleep.
func TestPipelinedRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := &events{}
		release := map[string]chan struct{}{"p1": make(chan struct{}), "p2": make(chan struct{}), "p3": make(chan struct{}), "m1": make(chan struct{})}
		_, ln := startPipeServer(t, pipelineRoutes(ev, release), func(c *Config) { c.MaxInFlight = 8 })
		t.Cleanup(func() { releaseAll(release) }) // a failed step leaves handlers waiting
		c := dialPipe(t, ln)
		c.send(metadataReq("m1"), 1)
		c.send(produceReq("p1", true), 2)
		c.send(produceReq("p2", true), 3)
		c.send(metadataReq("m2"), 4)
		c.send(kmsg.NewPtrDescribeClusterRequest(), 5)
		c.send(produceReq("p3", true), 6)
		c.send(metadataReq("m3"), 7)

		step := func(why string, want ...string) {
			t.Helper()
			synctest.Wait()
			if got := ev.snapshot(); !slices.Equal(got, want) {
				t.Fatalf("%s:\n got %v\nwant %v", why, got, want)
			}
		}
		step("a pipelined request started before the concurrent one before it finished", "start m1")
		close(release["m1"])
		step("p2 must start while p1 runs, and nothing else", "start m1", "end m1", "start p1", "start p2")
		close(release["p2"]) // finishes first; m2 still waits for p1
		step("a concurrent request started before the pipelined ones before it finished",
			"start m1", "end m1", "start p1", "start p2", "end p2")
		close(release["p1"])
		step("m2, the ordered request and p3 run in turn once p1 is done; m3 waits for p3",
			"start m1", "end m1", "start p1", "start p2", "end p2", "end p1",
			"start m2", "end m2", "start ordered", "end ordered", "start p3")
		close(release["p3"])
		c.readInOrder(kmsg.Metadata, kmsg.Produce, kmsg.Produce, kmsg.Metadata, kmsg.DescribeCluster, kmsg.Produce, kmsg.Metadata)
		if !ev.before("end p3", "start m3") {
			t.Fatalf("m3 must start after p3 finished: %v", ev.snapshot())
		}
	})
}

// A pipelined handler that never calls Started holds the next pipelined request back until
// it returns.
func TestPipelinedWithoutStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := &events{}
		release := map[string]chan struct{}{"p1": make(chan struct{})}
		_, ln := startPipeServer(t, pipelineRoutes(ev, release), nil)
		t.Cleanup(func() { releaseAll(release) })
		c := dialPipe(t, ln)
		c.send(produceReq("p1", false), 1)
		c.send(produceReq("p2", true), 2)
		synctest.Wait()
		if got := ev.snapshot(); !slices.Equal(got, []string{"start p1"}) {
			t.Fatalf("p2 started before p1 said so or returned: %v", got)
		}
		close(release["p1"])
		c.readInOrder(kmsg.Produce, kmsg.Produce)
		if got := strings.Join(ev.snapshot(), ","); got != "start p1,end p1,start p2,end p2" {
			t.Fatalf("events: %s", got)
		}
	})
}

// The schedule's lists stay bounded however long a connection pipelines.
func TestScheduleListsStayBounded(t *testing.T) {
	s := newSchedule(4)
	for i := range 1000 {
		done := make(chan struct{})
		h := Handler{Pipelined: i%3 != 0, Concurrent: i%3 == 0}
		s.add(h, done, make(chan struct{}))
		close(done)
		if len(s.concurrent) > 4 || len(s.pipelined) > 4 {
			t.Fatalf("after %d requests: %d concurrent, %d pipelined", i, len(s.concurrent), len(s.pipelined))
		}
	}
}
