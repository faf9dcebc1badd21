package dataplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
)

// Only session id 0 exists: a full fetch that asks for a session gets session id 0, a request
// continuing a session gets FETCH_SESSION_ID_NOT_FOUND.
func TestFetchSessions(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "s", 1)
	ctx := ctxT(t)
	for _, tt := range []struct {
		id, epoch int32
		want      int16
	}{
		{0, -1, 0}, {0, 0, 0}, {7, 0, 0}, {7, -1, 0},
		{7, 1, kerr.FetchSessionIDNotFound.Code}, {0, 1, kerr.FetchSessionIDNotFound.Code},
	} {
		req := testutil.FetchPartitionsReq(12, "s", 0, 0)
		req.SessionID, req.SessionEpoch = tt.id, tt.epoch
		resp := g.fetchResp(t, ctx, req)
		if resp.ErrorCode != tt.want || resp.SessionID != 0 {
			t.Errorf("session %d epoch %d: error %d session %d, want error %d session 0", tt.id, tt.epoch, resp.ErrorCode, resp.SessionID, tt.want)
		}
	}
}

// KIP-74: the first partition with data returns its first record whatever the limits; later
// partitions stay within what max_bytes leaves. Reads from Iggy build batches record by
// record; the tail cache serves the producers' batches whole, as Kafka serves its log.
func TestFetchByteLimits(t *testing.T) {
	for _, mode := range []struct {
		name   string
		env    []string
		cached bool
	}{{"from Iggy", []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=0"}, false}, {"from the tail cache", nil, true}} {
		t.Run(mode.name, func(t *testing.T) { testFetchByteLimits(t, mode.env, mode.cached) })
	}
}

func testFetchByteLimits(t *testing.T, env []string, cached bool) {
	g := startGateway(t, gatewayOpts{bridge: true, env: env})
	g.mkTopic("kafka", "l", 2)
	big := bytes.Repeat([]byte("x"), 10_000)
	g.produceValues(t, "l", 0, big, big, big)
	g.produceValues(t, "l", 1, big, big)
	ctx := ctxT(t)

	count := func(resp *kmsg.FetchResponse) []int {
		var n []int
		for i := range resp.Topics[0].Partitions {
			n = append(n, len(fetchedRecords(t, &resp.Topics[0].Partitions[i])))
		}
		return n
	}
	// Partitions whose limits fit in max_bytes together are read in parallel, others one
	// after the other: both must answer alike. A cached batch holds a partition's records
	// whole (3 and 2 records of 10 kB), and may begin before the fetch offset.
	tests := []struct {
		name                  string
		maxBytes, partitionMB int32
		offset                int64
		partitions            []int32
		want, wantCached      []int
	}{
		{"everything fits", 1 << 20, 1 << 20, 0, []int32{0, 1}, []int{3, 2}, []int{3, 2}},
		{"partition limit below one record", 1 << 20, 100, 0, []int32{0, 1}, []int{1, 0}, []int{3, 0}},
		{"partition limit two records", 1 << 20, 25_000, 0, []int32{0, 1}, []int{2, 2}, []int{3, 2}},
		{"first non-empty partition after an empty one", 1 << 20, 100, 2, []int32{1, 0}, []int{0, 1}, []int{0, 3}},
		{"request limit below one record", 100, 1 << 20, 0, []int32{0, 1}, []int{1, 0}, []int{3, 0}},
		{"request limit spans the partitions", 45_000, 1 << 20, 0, []int32{0, 1}, []int{3, 1}, []int{3, 0}},
		{"partition limits exactly fill the request", 30_000, 15_000, 0, []int32{0, 1}, []int{1, 1}, []int{3, 0}},
	}
	for _, tt := range tests {
		req := testutil.FetchPartitionsReq(12, "l", tt.offset, tt.partitions...)
		req.MaxBytes = tt.maxBytes
		for i := range req.Topics[0].Partitions {
			req.Topics[0].Partitions[i].PartitionMaxBytes = tt.partitionMB
		}
		want := tt.want
		if cached {
			want = tt.wantCached
		}
		if got := count(g.fetchResp(t, ctx, req)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: records per partition %v, want %v", tt.name, got, want)
		}
	}
}

// Long poll: an empty fetch waits for max_wait_ms; a produce through the gateway, or a native
// Iggy write, ends the wait with the new record.
func TestFetchLongPoll(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "w", 1)
	ctx := ctxT(t)

	req := testutil.FetchPartitionsReq(12, "w", 0, 0)
	req.MaxWaitMillis = 100
	start := time.Now()
	resp := g.fetchResp(t, ctx, req)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) != 0 || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("empty fetch: %+v after %s, want nothing after 100 ms", p, time.Since(start))
	}

	wake := func(name string, offset int64, write func()) {
		req := testutil.FetchPartitionsReq(12, "w", offset, 0)
		req.MaxWaitMillis = 60_000 // longer than the test's context: only new data ends it
		done := g.fetchAsync(ctx, req)
		waitForCondition(t, "the fetch to wait", func() bool { return g.waiting("w") })
		write()
		select {
		case r := <-done:
			got := fetchedRecords(t, &r.get(t).Topics[0].Partitions[0])
			if len(got) != 1 || got[0].Offset != offset {
				t.Errorf("%s: woke with %v", name, got)
			}
		case <-ctx.Done():
			t.Fatalf("%s: the write did not wake the fetch", name)
		}
	}
	wake("produce through the gateway", 0, func() { g.produceValues(t, "w", 0, []byte("x")) })
	wake("native Iggy write", 1, func() {
		if _, err := g.iggy.SendMessages(ctx, iggy.Name("kafka"), iggy.Name("w"), 0, []iggy.Message{{Payload: []byte("native")}}); err != nil {
			t.Error(err)
		}
	})
	if g.waiting("w") {
		t.Error("the topic is still probed after every fetch returned")
	}
}

// waiting reports whether a fetch waits on the topic (its probe runs).
func (g *gateway) waiting(topic string) bool {
	g.b.data.mu.Lock()
	defer g.b.data.mu.Unlock()
	for target := range g.b.data.probes {
		if target.Topic == topic {
			return true
		}
	}
	return false
}

// min_bytes: data below it makes the fetch wait for more until max_wait_ms.
func TestFetchMinBytes(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "m", 1)
	g.produceValues(t, "m", 0, []byte("small"))
	ctx := ctxT(t)
	req := testutil.FetchPartitionsReq(12, "m", 0, 0)
	req.MinBytes, req.MaxWaitMillis = 1<<20, 60_000
	req.Topics[0].Partitions[0].PartitionMaxBytes = 4 << 20
	done := g.fetchAsync(ctx, req)
	waitForCondition(t, "the fetch to wait", func() bool { return g.waiting("m") })
	g.produceValues(t, "m", 0, bytes.Repeat([]byte("y"), 1<<20))
	resp := (<-done).get(t)
	if got := fetchedRecords(t, &resp.Topics[0].Partitions[0]); len(got) != 2 {
		t.Errorf("read %d records, want both", len(got))
	}
}

// A message that is not a valid gateway message stops the partition with an error (logged
// once), after the records before it were delivered. Native messages read as records.
func TestFetchUnreadableAndNativeMessages(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "c", 1)
	ctx := ctxT(t)
	headers := iggy.AppendHeader(nil, iggy.HeaderString, []byte("h"), iggy.HeaderRaw, []byte("v"))
	foreign := iggy.AppendHeader(nil, iggy.HeaderString, []byte("kafka.v"), iggy.HeaderRaw, []byte{9})
	for _, m := range []iggy.Message{
		{Payload: []byte("native"), Headers: headers, OriginTimestamp: 1_700_000_000_000_000},
		{Payload: []byte("from the future"), Headers: foreign},
	} {
		if _, err := g.iggy.SendMessages(ctx, iggy.Name("kafka"), iggy.Name("c"), 0, []iggy.Message{m}); err != nil {
			t.Fatal(err)
		}
	}
	resp := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "c", 0, 0))
	p := &resp.Topics[0].Partitions[0]
	got := fetchedRecords(t, p)
	if p.ErrorCode != 0 || len(got) != 1 || string(got[0].Value) != "native" || got[0].Key != nil ||
		len(got[0].Headers) != 1 || got[0].Headers[0].Key != "h" || string(got[0].Headers[0].Value) != "v" ||
		got[0].Timestamp.UnixMilli() != 1_700_000_000_000 {
		t.Fatalf("first fetch: code %d records %+v", p.ErrorCode, got)
	}
	for range 2 {
		resp = g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "c", 1, 0))
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownServerError.Code || len(p.RecordBatches) != 0 {
			t.Fatalf("fetch at the unreadable message: code %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
		}
	}
	g.b.data.mu.Lock()
	logged := len(g.b.data.corrupt)
	g.b.data.mu.Unlock()
	if logged != 1 {
		t.Errorf("%d corrupt messages remembered, want 1", logged)
	}
}

// pollFaults fails polls or topic reads on demand.
type pollFaults struct {
	iggy.API
	pollErr, topicErr atomic.Pointer[error]
	firstOffset       atomic.Int64 // > 0: PollFirst answers as if older messages expired
}

func (f *pollFaults) PollMessages(ctx context.Context, req iggy.PollRequest) (*iggy.Polled, error) {
	if err := f.pollErr.Load(); err != nil {
		return nil, *err
	}
	if o := f.firstOffset.Load(); o > 0 && req.Strategy.Kind == iggy.PollFirst {
		req.Strategy = iggy.PollingStrategy{Kind: iggy.PollOffset, Value: uint64(o)}
	}
	return f.API.PollMessages(ctx, req)
}

func (f *pollFaults) GetTopic(ctx context.Context, stream, topic iggy.Identifier) (*iggy.Topic, error) {
	if err := f.topicErr.Load(); err != nil {
		return nil, *err
	}
	return f.API.GetTopic(ctx, stream, topic)
}

// Fetch answers only codes the Java consumer accepts; an offset below the log start is out of
// range.
func TestFetchIggyFailures(t *testing.T) {
	var pf *pollFaults
	g := startGateway(t, gatewayOpts{bridge: true, wrap: func(a iggy.API) iggy.API { pf = &pollFaults{API: a}; return pf }})
	g.mkTopic("kafka", "e", 1)
	g.produceValues(t, "e", 0, []byte("a"), []byte("b"), []byte("c"))
	ctx := ctxT(t)
	// Topic reads are made by fetches at the known end of a partition (resolveKnown).
	code := func(offset int64) int16 {
		return g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "e", offset, 0)).Topics[0].Partitions[0].ErrorCode
	}
	for _, tt := range []struct {
		name  string
		topic bool
		err   error
		want  int16
	}{
		{"poll timeout", false, context.DeadlineExceeded, kerr.NotLeaderForPartition.Code},
		{"poll connection", false, &iggy.ConnError{Op: "poll", Err: context.Canceled, Sent: true}, kerr.NotLeaderForPartition.Code},
		{"poll unauthorized", false, &iggy.Error{Code: iggy.CodeUnauthorized}, kerr.TopicAuthorizationFailed.Code},
		{"poll other", false, &iggy.Error{Code: iggy.CodeInvalidFormat}, kerr.UnknownServerError.Code},
		{"topic timeout", true, context.DeadlineExceeded, kerr.NotLeaderForPartition.Code},
		{"topic gone", true, &iggy.Error{Code: iggy.CodeTopicNameNotFound}, kerr.UnknownTopicOrPartition.Code},
	} {
		slot := &pf.pollErr
		if tt.topic {
			slot = &pf.topicErr
		}
		slot.Store(&tt.err)
		g.expireLogStart("e", 0) // the log start offset comes from a poll too
		offset := int64(0)
		if tt.topic {
			offset = 3
		}
		if got := code(offset); got != tt.want {
			t.Errorf("%s: code %d, want %d", tt.name, got, tt.want)
		}
		slot.Store(nil)
	}
	pf.firstOffset.Store(2)
	g.expireLogStart("e", 0)
	resp := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "e", 0, 0))
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Errorf("offset below the log start: code %d", p.ErrorCode)
	}
	resp = g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "e", 2, 0))
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.LogStartOffset != 2 || len(fetchedFrom(t, &p, 2)) != 1 {
		t.Errorf("from the log start: %+v", p)
	}
}

// expireLogStart makes the next read of the partition's log start offset poll Iggy.
func (g *gateway) expireLogStart(topic string, partition uint32) {
	st := g.b.data.part(partKey{Target: g.b.topics.Map().Resolve(topic), Partition: partition})
	st.mu.Lock()
	st.logStartUntil = time.Time{}
	st.mu.Unlock()
}

func TestFetchBridgeOff(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	resp := g.fetchResp(t, ctxT(t), testutil.FetchPartitionsReq(12, "t", 0, 0, 1))
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.HighWatermark != -1 {
			t.Errorf("partition %d: %+v", p.Partition, p)
		}
	}
}

// BeginShutdown answers waiting fetches at once, so they do not hold up the drain.
func TestFetchEndsAtShutdown(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "sd", 1)
	ctx := ctxT(t)
	req := testutil.FetchPartitionsReq(12, "sd", 0, 0)
	req.MaxWaitMillis = 60_000
	done := g.fetchAsync(ctx, req)
	waitForCondition(t, "the fetch to wait", func() bool { return g.waiting("sd") })
	g.b.BeginShutdown()
	select {
	case r := <-done:
		if p := r.get(t).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.HighWatermark != 0 {
			t.Errorf("answer at shutdown: %+v", p)
		}
	case <-ctx.Done():
		t.Fatal("the fetch kept waiting after BeginShutdown")
	}
}

func TestPollCount(t *testing.T) {
	tests := []struct {
		name      string
		want      int
		size      int
		available uint64
		sure      bool
		count     uint32
	}{
		{"sure size fills the limit in one poll, with an eighth to spare", 1 << 20, 1040, 1 << 20, true, 1008 + 126 + 1},
		{"unsure size starts small", 1 << 20, 1040, 1 << 20, false, firstPollCount},
		{"no more than available", 1 << 20, 1040, 10, true, 10},
		{"capped per poll", 64 << 20, 100, 1 << 30, true, maxPollCount},
		{"at least one", 0, 1040, 5, true, 1},
		{"unknown size", 4096, 0, 1 << 20, false, firstPollCount},
	}
	for _, tt := range tests {
		if got := pollCount(tt.want, tt.size, tt.available, tt.sure); got != tt.count {
			t.Errorf("%s: pollCount = %d, want %d", tt.name, got, tt.count)
		}
	}
}

// pollCounter counts the reading polls (by offset) made through it, and their largest count.
type pollCounter struct {
	iggy.API
	reads   atomic.Int64
	largest atomic.Int64 // the largest count asked for
}

func (c *pollCounter) PollMessages(ctx context.Context, req iggy.PollRequest) (*iggy.Polled, error) {
	if req.Strategy.Kind == iggy.PollOffset {
		c.reads.Add(1)
		for n := int64(req.Count); ; {
			old := c.largest.Load()
			if n <= old || c.largest.CompareAndSwap(old, n) {
				break
			}
		}
	}
	return c.API.PollMessages(ctx, req)
}

// A fetch of stored records polls Iggy once per partition: a poll costs the Iggy server far
// more than the messages in it, and counts made from the messages' stored sizes (the
// gateway's own headers included) used to fall short of the byte limit by a few records,
// which took a second poll of their own.
func TestFetchPollsOncePerPartition(t *testing.T) {
	var pc *pollCounter
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=0"},
		wrap: func(a iggy.API) iggy.API { pc = &pollCounter{API: a}; return pc }})
	g.mkTopic("kafka", "p", 1)
	values := make([][]byte, 4000)
	for i := range values {
		values[i] = bytes.Repeat([]byte{byte('a' + i%26)}, 900+i%200)
	}
	g.produceValues(t, "p", 0, values...)
	ctx := ctxT(t)
	offset := int64(0)
	for fetch := 0; offset < int64(len(values)); fetch++ {
		before := pc.reads.Load()
		p := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "p", offset, 0)).Topics[0].Partitions[0]
		recs := fetchedFrom(t, &p, offset)
		if len(recs) == 0 {
			t.Fatalf("fetch %d at offset %d: no records (code %d)", fetch, offset, p.ErrorCode)
		}
		// The first fetch learns the partition's sizes with a small poll first.
		if polls := pc.reads.Load() - before; fetch > 0 && polls != 1 {
			t.Errorf("fetch %d at offset %d (%d records): %d polls, want 1", fetch, offset, len(recs), polls)
		}
		offset = recs[len(recs)-1].Offset + 1
	}
}

// Poll counts follow a partition's messages when they grow: a record size learnt from small
// records must not ask Iggy for thousands of the large messages written since.
func TestFetchPollCountAfterMessagesGrow(t *testing.T) {
	var pc *pollCounter
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=0"},
		wrap: func(a iggy.API) iggy.API { pc = &pollCounter{API: a}; return pc }})
	g.mkTopic("kafka", "grow", 1)
	small := make([][]byte, 2000)
	for i := range small {
		small[i] = []byte("small record " + strconv.Itoa(i))
	}
	g.produceValues(t, "grow", 0, small...)
	ctx := ctxT(t)
	for offset := int64(0); offset < int64(len(small)); {
		p := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "grow", offset, 0)).Topics[0].Partitions[0]
		recs := fetchedFrom(t, &p, offset)
		if len(recs) == 0 {
			t.Fatalf("no records at offset %d", offset)
		}
		offset = recs[len(recs)-1].Offset + 1
	}
	big := make([][]byte, 40) // 10 MiB
	for i := range big {
		big[i] = bytes.Repeat([]byte{byte(i)}, 256<<10)
	}
	for _, v := range big {
		g.produceValues(t, "grow", 0, v)
	}
	pc.largest.Store(0)
	p := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "grow", int64(len(small)), 0)).Topics[0].Partitions[0]
	if recs := fetchedFrom(t, &p, int64(len(small))); len(recs) == 0 {
		t.Fatal("no large records fetched")
	}
	// 1 MiB of 256 KiB records: 4, and 8 at most with what pollCount adds to spare.
	if n := pc.largest.Load(); n > 8 {
		t.Errorf("polled %d large messages at once for a 1 MiB fetch", n)
	}
}

// A consumer reading past a run of large messages that the partition's average size hides
// (written by a native Iggy client among many small ones) is not stuck: a poll whose answer
// would exceed Iggy's frame limit is made again for fewer messages. The limit is scaled down
// here (frameLimit) so that the test moves megabytes, not the 64 MiB a real refusal takes;
// TestReplyTooLarge (internal/iggy) covers the client's side of a real one.
func TestFetchPollLargerThanAFrame(t *testing.T) {
	var fl *frameLimit
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_TAIL_CACHE_BYTES=0"},
		wrap: func(a iggy.API) iggy.API { fl = &frameLimit{API: a, limit: 4 << 20}; return fl }})
	g.mkTopic("kafka", "huge", 1)
	ctx := ctxT(t)
	small := make([]iggy.Message, 3000)
	for i := range small {
		small[i] = iggy.Message{Payload: []byte("small " + strconv.Itoa(i))}
	}
	if _, err := g.iggy.SendMessages(ctx, iggy.Name("kafka"), iggy.Name("huge"), 0, small); err != nil {
		t.Fatal(err)
	}
	const big = 12 // 6 MiB: more than one (scaled-down) frame may carry
	for i := range big {
		m := []iggy.Message{{Payload: bytes.Repeat([]byte{byte(i)}, 512<<10)}}
		if _, err := g.iggy.SendMessages(ctx, iggy.Name("kafka"), iggy.Name("huge"), 0, m); err != nil {
			t.Fatal(err)
		}
	}
	offset, end := int64(0), int64(len(small)+big)
	for fetches := 0; offset < end; fetches++ {
		if fetches > 100 {
			t.Fatalf("still at offset %d after %d fetches", offset, fetches)
		}
		p := g.fetchResp(t, ctx, testutil.FetchPartitionsReq(12, "huge", offset, 0)).Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			t.Fatalf("fetch at offset %d: error %d", offset, p.ErrorCode)
		}
		recs := fetchedFrom(t, &p, offset)
		if len(recs) == 0 {
			t.Fatalf("fetch at offset %d: no records", offset)
		}
		offset = recs[len(recs)-1].Offset + 1
	}
	// Each refusal costs the server a whole answer. The size a refusal declares is noted, so
	// the next polls are small; the small messages read after it pull the estimate down again
	// until a poll reaches the large ones once more: a few refusals, not one per fetch.
	if n := fl.refused.Load(); n == 0 || n > 5 {
		t.Errorf("%d polls refused as too large, want 1 to 5", n)
	}
}

// frameLimit refuses polls whose answers would hold more than limit bytes, as the Iggy client
// refuses answers larger than a frame.
type frameLimit struct {
	iggy.API
	limit   int
	refused atomic.Int64
}

func (f *frameLimit) PollMessages(ctx context.Context, req iggy.PollRequest) (*iggy.Polled, error) {
	p, err := f.API.PollMessages(ctx, req)
	if err != nil {
		return p, err
	}
	size := 0
	for _, m := range p.Messages {
		size += 64 + len(m.Payload) + len(m.Headers) // Iggy's message header
	}
	if size <= f.limit {
		return p, nil
	}
	p.Release()
	f.refused.Add(1)
	return nil, &iggy.ConnError{Op: "poll_messages", Sent: true,
		Err: fmt.Errorf("%w: %w", iggy.ErrReplyTooLarge, &iggy.FrameSizeError{Size: uint32(size), Limit: uint32(f.limit)})}
}

// A Fetch of very many unknown topics reserves its answer (an error entry per partition) and
// the state kept with it before allocating them, topic by topic as Metadata does (issue 25: it
// was built unreserved, the hostile test's highest peak); a refused reservation fails the
// request (the listener closes the connection) before anything is read.
func TestFetchAnswerReservedBeforeBuilt(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	var reserved atomic.Int64
	refuse := atomic.Bool{}
	defer func(orig func(context.Context, int64) error) { reserveAnswerBytes = orig }(reserveAnswerBytes)
	reserveAnswerBytes = func(_ context.Context, n int64) error {
		if refuse.Load() {
			return listener.ErrAnswerTooLarge
		}
		reserved.Add(n)
		return nil
	}
	const topics, parts = 2000, 3
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxBytes, req.SessionEpoch = 12, 1<<20, -1
	for i := range topics {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = fmt.Sprintf("unknown-%d", i)
		for p := range int32(parts) {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp := g.fetchResp(t, ctxT(t), req)
	if len(resp.Topics) != topics || resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("%d topics answered, first code %d", len(resp.Topics), resp.Topics[0].Partitions[0].ErrorCode)
	}
	answer := int64(topics)*int64(unsafe.Sizeof(kmsg.FetchResponseTopic{})) + int64(topics*parts)*int64(unsafe.Sizeof(kmsg.FetchResponseTopicPartition{}))
	if got := reserved.Load(); got < answer {
		t.Errorf("reserved %d bytes for an answer of at least %d", got, answer)
	}
	refuse.Store(true)
	if _, err := g.b.Fetch(ctxT(t), dataConn, req); !errors.Is(err, listener.ErrAnswerTooLarge) {
		t.Errorf("fetch with its answer refused: %v", err)
	}
}
