package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The rebalance legs (--rebalance-members N, issue 28): a consumer group of N franz-go members
// (cooperative-sticky, franz-go's default, committing what they processed when partitions are
// revoked, as docs/CONSUMER-GROUPS.md expects of a group that must not process a record
// twice) reads a topic that a producer keeps writing to, through three membership changes:
// N members join an empty group, half of them leave while as many new ones join (a rolling
// replacement), and one more leaves. Each change is timed from its first step to the moment
// DescribeGroups reports the group Stable with the expected members and every partition
// assigned to exactly one of them; then the producer stops, the group drains the topic, and
// the leg counts the records some member processed more than once.

// rebalancePollRecords bounds one poll, so that members are between polls, and so can be
// revoked, often.
const rebalancePollRecords = 100

// rebalanceProduceEvery paces the producer: records keep arriving through every change
// without making the leg a throughput test.
const rebalanceProduceEvery = time.Millisecond

// rebalanceReport is what a rebalance leg measured.
type rebalanceReport struct {
	Members int
	// Phases are the membership changes in order (join, replace, leave) and their times to
	// stable.
	Phases []rebalancePhase
	// Produced is what the producer wrote; Processed counts every record a member handed to
	// its processing, Doubles those that were already processed before (by any member).
	Produced, Processed, Doubles int64
}

type rebalancePhase struct {
	Name     string
	ToStable time.Duration
}

// total is the sum of the times to stable.
func (r *rebalanceReport) total() time.Duration {
	var d time.Duration
	for _, p := range r.Phases {
		d += p.ToStable
	}
	return d
}

func (b *bench) rebalanceGateway(ctx context.Context, r *legResult) error {
	return b.rebalance(ctx, r, b.gwAddr)
}

func (b *bench) rebalanceKafka(ctx context.Context, r *legResult) error {
	return b.rebalance(ctx, r, b.o.KafkaAddr)
}

// rebalance runs the scenario against the Kafka API at addr on a topic and group of its own.
func (b *bench) rebalance(ctx context.Context, r *legResult, addr string) error {
	admCl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	topic, group := "load-"+run+"-rebalance", "load-"+run+"-rebalance"
	resp, err := adm.CreateTopic(ctx, int32(b.o.Partitions), 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %q: %w", topic, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		adm.DeleteTopics(dctx, topic) //nolint:errcheck // best effort: the round goes on
		adm.DeleteGroup(dctx, group)  //nolint:errcheck
	}()
	start := time.Now()
	rep, err := runRebalance(ctx, rebalanceSetup{
		addr: addr, topic: topic, group: group, partitions: b.o.Partitions, members: b.o.RebalanceMembers,
		timeout: b.o.StallTimeout, adm: adm,
	})
	r.Elapsed = time.Since(start)
	r.Rebalance = rep
	if rep != nil {
		r.Records = rep.Processed - rep.Doubles
	}
	return err
}

type rebalanceSetup struct {
	addr, topic, group string
	partitions         int
	members            int
	timeout            time.Duration // bound of each change and of the drain
	adm                *kadm.Client
}

// groupRun is the shared state of a group's members: which records were processed.
type groupRun struct {
	s         rebalanceSetup
	mu        sync.Mutex
	seen      map[int64]struct{} // partition<<40 | offset
	processed atomic.Int64
	doubles   atomic.Int64
	errs      chan error
}

// member is one consumer of the group; stop ends its poll loop and closes the client.
type member struct {
	cl   *kgo.Client
	stop context.CancelFunc
	done chan struct{}
}

func runRebalance(ctx context.Context, s rebalanceSetup) (*rebalanceReport, error) {
	if s.members < 2 {
		return nil, errors.New("--rebalance-members must be at least 2")
	}
	g := &groupRun{s: s, seen: make(map[int64]struct{}), errs: make(chan error, 1)}
	rep := &rebalanceReport{Members: s.members}

	prodCtx, stopProducing := context.WithCancel(ctx)
	var produced atomic.Int64
	prodDone := make(chan error, 1)
	go func() { prodDone <- produceSteadily(prodCtx, s, &produced) }()
	defer stopProducing()

	var members []*member
	defer func() {
		for _, m := range members {
			m.close()
		}
	}()
	phase := func(name string, want int, change func() error) error {
		start := time.Now()
		if err := change(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := g.waitStable(ctx, want); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		rep.Phases = append(rep.Phases, rebalancePhase{Name: name, ToStable: time.Since(start)})
		return nil
	}
	join := func(n int) error {
		for range n {
			m, err := g.startMember(ctx)
			if err != nil {
				return err
			}
			members = append(members, m)
		}
		return nil
	}
	err := phase("join", s.members, func() error { return join(s.members) })
	if err == nil {
		half := s.members / 2
		err = phase("replace", s.members, func() error {
			// Leaving members close concurrently with the new ones joining, as in a rolling
			// restart.
			leaving := members[:half]
			members = members[half:]
			var wg sync.WaitGroup
			for _, m := range leaving {
				wg.Add(1)
				go func() { defer wg.Done(); m.close() }()
			}
			err := join(half)
			wg.Wait()
			return err
		})
	}
	if err == nil {
		err = phase("leave", s.members-1, func() error {
			members[0].close()
			members = members[1:]
			return nil
		})
	}
	stopProducing()
	if perr := <-prodDone; err == nil && perr != nil {
		err = fmt.Errorf("producer: %w", perr)
	}
	rep.Produced = produced.Load()
	if err == nil {
		err = g.waitDrained(ctx, rep.Produced)
	}
	rep.Processed, rep.Doubles = g.processed.Load(), g.doubles.Load()
	select {
	case merr := <-g.errs:
		err = errors.Join(err, merr)
	default:
	}
	return rep, err
}

// produceSteadily writes small keyed records round the partitions until ctx ends, and
// counts those acknowledged.
func produceSteadily(ctx context.Context, s rebalanceSetup, acked *atomic.Int64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.addr), kgo.DefaultProduceTopic(s.topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	var failed atomic.Value
	tick := time.NewTicker(rebalanceProduceEvery)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			if err := cl.Flush(context.WithoutCancel(ctx)); err != nil {
				return err
			}
			if err, _ := failed.Load().(error); err != nil {
				return err
			}
			return nil
		case <-tick.C:
		}
		cl.Produce(context.WithoutCancel(ctx), &kgo.Record{Value: []byte(strconv.Itoa(i))}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, err)
				return
			}
			acked.Add(1)
		})
	}
}

// startMember starts a member that processes records (notes them) and commits what it
// processed when its partitions are revoked, so that no record should be processed twice.
func (g *groupRun) startMember(ctx context.Context) (*member, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(g.s.addr),
		kgo.ConsumerGroup(g.s.group),
		kgo.ConsumeTopics(g.s.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) {
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				g.fail(fmt.Errorf("commit on revoke: %w", err))
			}
		}),
	)
	if err != nil {
		return nil, err
	}
	mctx, stop := context.WithCancel(ctx)
	m := &member{cl: cl, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for mctx.Err() == nil {
			pctx, cancel := context.WithTimeout(mctx, 100*time.Millisecond)
			fetches := cl.PollRecords(pctx, rebalancePollRecords)
			cancel()
			fetches.EachRecord(g.process)
			cl.AllowRebalance()
		}
	}()
	return m, nil
}

// close stops polling (every polled record has been processed), then leaves the group:
// franz-go revokes, so the member commits, before it sends LeaveGroup.
func (m *member) close() {
	if m.cl == nil {
		return
	}
	m.stop()
	<-m.done
	m.cl.AllowRebalance()
	m.cl.Close()
	m.cl = nil
}

func (g *groupRun) process(r *kgo.Record) {
	k := int64(r.Partition)<<40 | r.Offset
	g.processed.Add(1)
	g.mu.Lock()
	_, dup := g.seen[k]
	g.seen[k] = struct{}{}
	g.mu.Unlock()
	if dup {
		g.doubles.Add(1)
	}
}

func (g *groupRun) fail(err error) {
	select {
	case g.errs <- err:
	default:
	}
}

func (g *groupRun) distinct() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return int64(len(g.seen))
}

// waitStable polls DescribeGroups until the group is Stable with want members and each
// partition assigned to exactly one of them.
func (g *groupRun) waitStable(ctx context.Context, want int) error {
	deadline := time.Now().Add(g.s.timeout)
	for {
		ok, err := g.stable(ctx, want)
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("group not stable with %d members after %s (last: %v)", want, g.s.timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (g *groupRun) stable(ctx context.Context, want int) (bool, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	described, err := g.s.adm.DescribeGroups(dctx, g.s.group)
	if err != nil {
		return false, err
	}
	d, ok := described[g.s.group]
	if !ok || d.Err != nil {
		return false, fmt.Errorf("describe: %v", d.Err)
	}
	if d.State != "Stable" || len(d.Members) != want {
		return false, fmt.Errorf("state %s with %d members", d.State, len(d.Members))
	}
	owners := make(map[int32]int)
	for _, m := range d.Members {
		a, ok := m.Assigned.AsConsumer()
		if !ok {
			return false, errors.New("an assignment is not of the consumer protocol")
		}
		for _, t := range a.Topics {
			for _, p := range t.Partitions {
				owners[p]++
			}
		}
	}
	for p := range int32(g.s.partitions) {
		if owners[p] != 1 {
			return false, fmt.Errorf("partition %d has %d owners", p, owners[p])
		}
	}
	return true, nil
}

// waitDrained waits until the members have processed every produced record once.
func (g *groupRun) waitDrained(ctx context.Context, produced int64) error {
	last, lastMove := int64(-1), time.Now()
	for {
		n := g.distinct()
		if n >= produced {
			return nil
		}
		if n != last {
			last, lastMove = n, time.Now()
		} else if time.Since(lastMove) > g.s.timeout {
			return fmt.Errorf("group processed %d of %d records and made no progress for %s", n, produced, g.s.timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func isRebalance(name string) bool { return name == legRebalanceGateway || name == legRebalanceKafka }

// printRebalance prints each rebalance leg's times to stable and records processed twice
// per round, and the gateway/Kafka ratio of the total time to stable of each round (issue
// 28's goal: at most 1.0).
func printRebalance(w io.Writer, r *result) {
	for _, name := range []string{legRebalanceGateway, legRebalanceKafka} {
		legs := r.leg(name)
		if len(legs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%d members, time to stable per change; records processed twice):\n", name, r.Options.RebalanceMembers)
		for i, l := range legs {
			if l.Rebalance == nil {
				fmt.Fprintf(w, "  round %d: failed\n", i+1)
				continue
			}
			var phases []string
			for _, p := range l.Rebalance.Phases {
				phases = append(phases, fmt.Sprintf("%s %s", p.Name, p.ToStable.Round(time.Millisecond)))
			}
			fmt.Fprintf(w, "  round %d: %s, total %s; %d produced, %d processed, %d twice\n", i+1,
				strings.Join(phases, ", "), l.Rebalance.total().Round(time.Millisecond), l.Rebalance.Produced, l.Rebalance.Processed, l.Rebalance.Doubles)
		}
	}
	var rs []float64
	for _, round := range r.Rounds {
		var g, k *legResult
		for _, l := range round {
			switch l.Name {
			case legRebalanceGateway:
				g = l
			case legRebalanceKafka:
				k = l
			}
		}
		if g != nil && k != nil && g.Err == nil && k.Err == nil && k.Rebalance.total() > 0 {
			rs = append(rs, g.Rebalance.total().Seconds()/k.Rebalance.total().Seconds())
		}
	}
	if len(rs) > 0 {
		fmt.Fprintf(w, "gateway/kafka time to stable: %.2f median of rounds [%s] (below 1: the gateway is faster)\n", median(rs), twoDecimals(rs))
	}
}
