package e2e

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file holds what the several-gateway scenarios (multigw_test.go) drive and observe: raw
// requests to one chosen gateway, their workload (a producer, a consumer group's member loops,
// and a watch on the group's committed offsets) and its final checks.

// askGateway sends req to the gateway at addr on a fresh connection and returns its answer.
// Unlike a client library it neither retries nor follows leaders or coordinators, so it shows
// what that one gateway answers now.
func askGateway(addr string, req kmsg.Request) (kmsg.Response, error) {
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	return (&rawConn{Conn: nc}).roundTrip(req, 5*time.Second)
}

// gatewayMetadata is the gateway's Metadata answer for topics (none: brokers only).
func gatewayMetadata(addr string, topics ...string) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 7
	req.Topics = []kmsg.MetadataRequestTopic{}
	for _, name := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := askGateway(addr, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.MetadataResponse), nil
}

// brokerIDs are the node ids a Metadata answer lists, ascending.
func brokerIDs(md *kmsg.MetadataResponse) []int32 {
	var ids []int32
	for _, b := range md.Brokers {
		ids = append(ids, b.NodeID)
	}
	slices.Sort(ids)
	return ids
}

// leaders maps each partition of topic to its leader in a Metadata answer.
func leaders(md *kmsg.MetadataResponse, topic string) map[int32]int32 {
	out := map[int32]int32{}
	for _, tp := range md.Topics {
		if tp.Topic == nil || *tp.Topic != topic || tp.ErrorCode != 0 {
			continue
		}
		for _, p := range tp.Partitions {
			if p.ErrorCode == 0 {
				out[p.Partition] = p.Leader
			}
		}
	}
	return out
}

// ledBy are the partitions node leads, ascending.
func ledBy(leaders map[int32]int32, node int32) []int32 {
	var ps []int32
	for p, l := range leaders {
		if l == node {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

// groupCoordinator is the node the gateway at addr names as group's coordinator.
func groupCoordinator(addr, group string) (int32, error) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 2
	req.CoordinatorKey = group
	resp, err := askGateway(addr, req)
	if err != nil {
		return -1, err
	}
	r := resp.(*kmsg.FindCoordinatorResponse)
	if r.ErrorCode != 0 {
		return -1, fmt.Errorf("FindCoordinator: error code %d", r.ErrorCode)
	}
	return r.NodeID, nil
}

// servesGroup reports whether the gateway at addr answers OffsetFetch for group without an
// error: it coordinates the group and has loaded its coordinator-log partition.
func servesGroup(addr, group string) bool {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 5
	req.Group = group
	resp, err := askGateway(addr, req)
	return err == nil && resp.(*kmsg.OffsetFetchResponse).ErrorCode == 0
}

// deliveries records every record the members of a group were given.
type deliveries struct {
	mu        sync.Mutex
	times     map[string]int  // by value
	committed map[int32]int64 // committed offsets at the mark
	behind    []string        // records given out after the mark below its committed offset
}

func newDeliveries() *deliveries { return &deliveries{times: map[string]int{}} }

func (d *deliveries) add(r *kgo.Record) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.times[string(r.Value)]++
	if c, ok := d.committed[r.Partition]; ok && r.Offset < c {
		d.behind = append(d.behind, fmt.Sprintf("%s at %d/%d (committed %d)", r.Value, r.Partition, r.Offset, c))
	}
}

// mark takes committed as the group's committed offsets from now on: a record below them
// given out later means the group resumed before its committed offsets.
func (d *deliveries) mark(committed map[int32]int64) {
	d.mu.Lock()
	d.committed = committed
	d.mu.Unlock()
}

// resumedBehind are the records given out after the mark below the committed offsets.
func (d *deliveries) resumedBehind() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.behind)
}

// count is how many distinct records were delivered, and how many deliveries were repeats.
func (d *deliveries) count() (distinct, repeats int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range d.times {
		distinct++
		repeats += n - 1
	}
	return distinct, repeats
}

// missing are the acknowledged records of log no member was given (at most 10 named).
func (d *deliveries) missing(log *ackLog) (n int, some []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range log.ackedSoFar() {
		if d.times[string(r.Value)] == 0 {
			if n++; n <= 10 {
				some = append(some, string(r.Value))
			}
		}
	}
	return n, some
}

// runMember is one group member: it polls, hands each record to got, commits what it was given
// before it lets a rebalance happen (so that the next owner of a partition resumes after the
// last record given out), until stop is closed. Fetch and commit errors while a gateway is
// down are expected: the client retries them.
func runMember(ctx context.Context, cl *kgo.Client, stop <-chan struct{}, got func(*kgo.Record)) {
	defer cl.Close()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		fs := pollBriefly(ctx, cl)
		fs.EachRecord(got)
		commitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = cl.CommitUncommittedOffsets(commitCtx)
		cancel()
		cl.AllowRebalance()
	}
}

// memberOpts are the options of a group member: manual commits, rebalances only between
// polls, short session timeout so that a member whose coordinator died rejoins quickly.
func memberOpts(group, topic string) []kgo.Opt {
	return []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(10 * time.Second), kgo.HeartbeatInterval(time.Second)}
}

// offsetWatch samples a group's committed offsets and the topic's end offsets and records
// every committed offset beyond its partition's end, and every one lower than one seen before
// (nothing resets the group's offsets in these scenarios).
type offsetWatch struct {
	mu         sync.Mutex
	highest    map[int32]int64
	samples    int
	violations []string
}

// watchOffsets samples every 300 ms until ctx ends; wait for the returned channel to close.
func watchOffsets(ctx context.Context, adm *kadm.Client, group, topic string) (*offsetWatch, <-chan struct{}) {
	w := &offsetWatch{highest: map[int32]int64{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			w.sample(ctx, adm, group, topic)
			select {
			case <-ctx.Done():
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	return w, done
}

func (w *offsetWatch) sample(ctx context.Context, adm *kadm.Client, group, topic string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil || committed.Error() != nil {
		return // a coordinator moving: sampled again later
	}
	// The end offsets are read after the committed ones: ends only grow, so a committed
	// offset beyond a later end was beyond the end when it was committed too.
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples++
	committed.Each(func(o kadm.OffsetResponse) {
		if o.Topic != topic || o.Err != nil || o.At < 0 {
			return
		}
		if end, ok := ends.Lookup(topic, o.Partition); ok && end.Err == nil && o.At > end.Offset {
			w.violations = append(w.violations, fmt.Sprintf("partition %d: committed %d beyond the end %d", o.Partition, o.At, end.Offset))
		}
		if prev, ok := w.highest[o.Partition]; ok && o.At < prev {
			w.violations = append(w.violations, fmt.Sprintf("partition %d: committed offset went back from %d to %d", o.Partition, prev, o.At))
		}
		w.highest[o.Partition] = max(w.highest[o.Partition], o.At)
	})
}

// committed is the highest committed offset seen of each partition.
func (w *offsetWatch) committed() map[int32]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.highest)
}

// result is how many samples were taken and what went wrong.
func (w *offsetWatch) result() (int, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.samples, slices.Clone(w.violations)
}

// clusterWork is the workload of the several-gateway scenarios: an idempotent franz-go
// producer (acks=all) writing numbered records to topic until stopped, members of group
// consuming them, and a watch on the group's committed offsets.
type clusterWork struct {
	env      *Env
	topic    string
	log      *ackLog
	got      *deliveries
	watch    *offsetWatch
	producer *kgo.Client
	members  int

	stopProducing, produced  chan struct{}
	stopMembers, membersDone chan struct{}
	stopWatch                context.CancelFunc
	watchDone                <-chan struct{}
}

// startClusterWork starts the producer and members group members through env; the watch
// stops when the test ends at the latest.
func startClusterWork(t *testing.T, ctx context.Context, env *Env, topic, group string, members int) *clusterWork {
	t.Helper()
	w := &clusterWork{
		env: env, topic: topic, log: newAckLog(), got: newDeliveries(), members: members,
		stopProducing: make(chan struct{}), produced: make(chan struct{}),
		stopMembers: make(chan struct{}), membersDone: make(chan struct{}, members),
	}
	w.producer = env.Kgo(t, kgo.RecordRetries(1000), kgo.RetryTimeout(time.Minute))
	go func() {
		defer close(w.produced)
		produceNumbered(ctx, w.producer, topic, "r", 1<<30, w.stopProducing, w.log)
	}()
	for range members {
		m := env.Kgo(t, memberOpts(group, topic)...)
		go func() { runMember(ctx, m, w.stopMembers, w.got.add); w.membersDone <- struct{}{} }()
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	w.watch, w.watchDone = watchOffsets(watchCtx, env.Admin(t), group, topic)
	w.stopWatch = stopWatch
	t.Cleanup(func() { stopWatch(); <-w.watchDone })
	return w
}

// finish stops the producer, waits up to deliverWithin until the group was given every
// acknowledged record, stops the members and the watch, and checks that every acknowledged
// record is stored exactly once, in order, and that no committed offset sampled passed the
// log end or went back. It returns how many samples of the committed offsets were taken.
func (w *clusterWork) finish(t *testing.T, ctx context.Context, deliverWithin time.Duration) (samples int) {
	t.Helper()
	close(w.stopProducing)
	<-w.produced
	if err := w.producer.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	w.log.checkFailures(t)
	waitFor(t, deliverWithin, "every acknowledged record given to the group", func() bool {
		n, _ := w.got.missing(w.log)
		return n == 0
	})
	close(w.stopMembers)
	for range w.members {
		<-w.membersDone
	}
	w.stopWatch()
	<-w.watchDone

	stored := readBack(t, ctx, w.env, w.topic)
	checkExactlyOnceInOrder(t, stored, w.log.checkStored(t, stored), w.log.rankOf)
	samples, violations := w.watch.result()
	for _, v := range violations {
		t.Error(v)
	}
	return samples
}
