package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// Fault scenarios (TESTING.md layer 6): Iggy connections dropped mid-request, Iggy restarted,
// the gateway killed with SIGKILL and restarted, clients disconnecting with a request parked.
// Nothing acknowledged is lost, nothing produced by an idempotent producer is stored twice or
// out of order (docs/IDEMPOTENCE.md), nothing hangs (every wait is bounded), and clients
// recover by themselves (no reconnect or restart by the test).

// TestFaults runs the fault scenarios with franz-go clients and raw Kafka connections.
func TestFaults(t *testing.T) {
	runScenarios(t, franzFamily, []Scenario{
		{Name: "fault-iggy-drop-during-produce", Needs: faultProduceNeeds, Run: faultIggyDropDuringProduce},
		{Name: "fault-iggy-drop-during-consume", Needs: groupDataNeeds, Run: faultIggyDropDuringConsume},
		{Name: "fault-gateway-sigkill-mid-produce", Needs: groupDataNeeds, Run: faultGatewayKilled},
		{Name: "fault-client-disconnect-mid-fetch", Needs: faultProduceNeeds, Run: faultDisconnectMidFetch},
		{Name: "fault-disconnect-releases-parked-requests", Needs: groupDataNeeds,
			Run: faultDisconnectReleasesParked},
		{Name: "fault-iggy-restart", Needs: faultProduceNeeds, Run: faultIggyRestart},
	})
}

// TestFaultsPython runs the gateway-crash scenario with librdkafka's idempotent producer.
func TestFaultsPython(t *testing.T) {
	runScenarios(t, pythonFamily, []Scenario{
		{Name: "fault-gateway-sigkill-mid-produce", Needs: faultProduceNeeds, Run: pythonGatewayKilled},
	})
}

// faultProduceNeeds are the features a scenario that produces and reads back needs.
var faultProduceNeeds = []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets}

// startMemIggyEnv starts a gateway on an in-memory Iggy server of its own, which the scenario
// can break (drop its connections, restart it) without touching other scenarios. It uses the
// in-memory server even when IGGY_TEST_ADDR names a real one: only that one can be broken on
// demand. Both are stopped when t ends.
func startMemIggyEnv(t *testing.T, extraEnv ...string) *Env {
	t.Helper()
	if sharedEnv(t).External() {
		t.Skip("needs a gateway started by the harness (IGGYGW_E2E_BOOTSTRAP is set)")
	}
	backend, err := startMemIggy("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(backend.close)
	env, err := startGatewayEnv(backend, extraEnv...)
	if err != nil {
		t.Fatalf("start gateway: %v", err)
	}
	t.Cleanup(func() { env.stopGateway(t) })
	return env
}

// restartMem closes the backend's in-memory server, runs down while it is closed, then starts
// an empty one on the same address (the in-memory server keeps nothing across a restart).
func (b *iggyBackend) restartMem(t *testing.T, down func()) {
	t.Helper()
	b.mu.Lock()
	srv := b.server
	b.mu.Unlock()
	if err := srv.Close(); err != nil {
		t.Fatalf("close the in-memory Iggy server: %v", err)
	}
	down()
	var next *iggyBackend
	var err error
	// The port was just released; bind it again, retrying briefly in case the kernel lags.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		next, err = startMemIggy(b.target.addr)
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("start the in-memory Iggy server again on %s: %v", b.target.addr, err)
	}
	b.mu.Lock()
	b.server = next.server
	b.mu.Unlock()
}

// ackLog records every record a producer was given and what it was told about each.
type ackLog struct {
	mu       sync.Mutex
	produced map[string]*kgo.Record // by value
	rank     map[string]int         // by value: the order of production
	acked    []*kgo.Record          // in acknowledgement order
	failed   map[string]error       // by value
}

func newAckLog() *ackLog {
	return &ackLog{produced: map[string]*kgo.Record{}, rank: map[string]int{}, failed: map[string]error{}}
}

func (l *ackLog) add(r *kgo.Record) {
	l.mu.Lock()
	l.produced[string(r.Value)] = r
	l.rank[string(r.Value)] = len(l.rank)
	l.mu.Unlock()
}

// rankOf is the place of value in production order.
func (l *ackLog) rankOf(value string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rank[value]
}

// promise is the Produce callback.
func (l *ackLog) promise(r *kgo.Record, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.failed[string(r.Value)] = err
		return
	}
	l.acked = append(l.acked, r)
}

func (l *ackLog) ackedSoFar() []*kgo.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.acked)
}

func (l *ackLog) acks() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// checkFailures fails t if a record was refused: the producer should have retried through the
// fault by itself.
func (l *ackLog) checkFailures(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failed) == 0 {
		return
	}
	var some []string
	for v, err := range l.failed {
		if len(some) < 5 {
			some = append(some, v+": "+err.Error())
		}
	}
	slices.Sort(some)
	t.Errorf("%d of %d records failed instead of being retried through the fault, e.g. %v", len(l.failed), len(l.produced), some)
}

// produceNumbered produces records <prefix>-NNNNNN with key k-N and header n=N (spread over the
// partitions by key) until n are produced or stop is closed, about 2000 a second, so that a
// fault lands while requests are in flight. It returns how many it produced.
func produceNumbered(ctx context.Context, cl *kgo.Client, topic, prefix string, n int, stop <-chan struct{}, log *ackLog) int {
	for i := 0; i < n; i++ {
		select {
		case <-stop:
			return i
		case <-ctx.Done():
			return i
		default:
		}
		r := &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k-%d", i), Value: fmt.Appendf(nil, "%s-%06d", prefix, i),
			Headers: []kgo.RecordHeader{{Key: "n", Value: []byte(strconv.Itoa(i))}}}
		log.add(r)
		cl.Produce(ctx, r, log.promise)
		if i%10 == 9 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return n
}

type partOffset struct {
	partition int32
	offset    int64
}

// readBack reads every record of topic, from each partition's start to the end offset it has
// now, with a group-less consumer, and returns them by partition and offset.
func readBack(t *testing.T, ctx context.Context, env *Env, topic string) map[partOffset]*kgo.Record {
	t.Helper()
	ends, err := env.Admin(t).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("list end offsets of %s: %v", topic, err)
	}
	total := 0
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("end offset of %s/%d: %v", topic, o.Partition, o.Err)
		}
		total += int(o.Offset)
	})
	cl := env.Kgo(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	stored := map[partOffset]*kgo.Record{}
	for _, r := range pollN(t, ctx, cl, total) {
		stored[partOffset{r.Partition, r.Offset}] = r
	}
	if len(stored) != total {
		t.Fatalf("read %d distinct offsets of %s, want %d (the end offsets %v)", len(stored), topic, total, ends)
	}
	return stored
}

// checkStored fails t for each acknowledged record that is not stored exactly as sent (key,
// value, headers, timestamp) at the partition and offset its acknowledgement gave, and for each
// stored record that is not a copy of a produced one. It returns how many stored records are
// extra copies (a retry of what may have landed, written again: none with an idempotent
// producer).
func (l *ackLog) checkStored(t *testing.T, stored map[partOffset]*kgo.Record) (duplicates int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	errs := 0
	report := func(format string, args ...any) {
		if errs++; errs <= 20 {
			t.Errorf(format, args...)
		}
	}
	for _, want := range l.acked {
		got, ok := stored[partOffset{want.Partition, want.Offset}]
		if !ok {
			report("acknowledged record %s at %d/%d is missing", want.Value, want.Partition, want.Offset)
			continue
		}
		if d := diffRecord(got, want, want.Offset); d != "" {
			report("acknowledged record %s: %s", want.Value, d)
		}
	}
	copies := map[string]int{}
	for po, got := range stored {
		want, ok := l.produced[string(got.Value)]
		if !ok {
			report("stored record %s at %d/%d was never produced", short(got.Value), po.partition, po.offset)
			continue
		}
		if d := diffRecord(got, want, got.Offset); d != "" {
			report("stored copy of %s at %d/%d: %s", want.Value, po.partition, po.offset, d)
		}
		copies[string(got.Value)]++
	}
	for _, n := range copies {
		duplicates += n - 1
	}
	if errs > 20 {
		t.Errorf("... and %d more", errs-20)
	}
	return duplicates
}

// checkExactlyOnceInOrder fails t unless every record is stored once and each partition holds
// its records in the order they were produced (rank: a value's place in production order).
func checkExactlyOnceInOrder(t *testing.T, stored map[partOffset]*kgo.Record, duplicates int, rank func(value string) int) {
	t.Helper()
	if duplicates != 0 {
		t.Errorf("%d duplicates stored by an idempotent producer", duplicates)
	}
	byPart := map[int32][]partOffset{}
	for po := range stored {
		byPart[po.partition] = append(byPart[po.partition], po)
	}
	for p, pos := range byPart {
		slices.SortFunc(pos, func(a, b partOffset) int { return int(a.offset - b.offset) })
		prev := ""
		for _, po := range pos {
			v := string(stored[po].Value)
			if prev != "" && rank(v) <= rank(prev) {
				t.Errorf("partition %d: %s at offset %d follows %s: out of order", p, v, po.offset, prev)
				break
			}
			prev = v
		}
	}
}

// gatewayLogLines counts the lines containing substr the gateway printed since mark.
func (e *Env) gatewayLogLines(mark int64, substr string) int {
	return strings.Count(e.gateway.Output.Since(mark), substr)
}

// faultIggyDropDuringProduce: an idempotent franz-go producer (acks=all, retries on) writes
// numbered records while every Iggy connection of the gateway is dropped five times. Every
// record is acknowledged without the test doing anything, every acknowledged record is
// stored exactly as sent where its acknowledgement said, and none is stored twice or out of
// order: the gateway reads back the sends the drops made uncertain.
func faultIggyDropDuringProduce(t *testing.T, _ *Env) {
	env := startMemIggyEnv(t)
	topic := env.CreateTopic(t, 3)
	ctx := ctxFor(t, 2*time.Minute)
	producer := env.Kgo(t)
	log := newAckLog()
	mark := env.gateway.Output.Mark()
	const n = 3000
	done := make(chan struct{})
	go func() {
		defer close(done)
		produceNumbered(ctx, producer, topic, "drop", n, nil, log)
	}()
	waitFor(t, 30*time.Second, "the first 100 acknowledgements", func() bool { return log.acks() >= 100 })
	for i := 0; i < 5; i++ {
		env.iggy.server.DropConnections()
		time.Sleep(200 * time.Millisecond)
	}
	ackedDuringDrops := log.acks()
	<-done
	if err := producer.Flush(ctx); err != nil {
		t.Fatalf("flush: %v (records still unacknowledged: the producer did not recover)", err)
	}
	log.checkFailures(t)
	if got := log.acks(); got != n {
		t.Errorf("%d of %d records acknowledged", got, n)
	}
	stored := readBack(t, ctx, env, topic)
	dups := log.checkStored(t, stored)
	checkExactlyOnceInOrder(t, stored, dups, log.rankOf)
	t.Logf("%d records acknowledged (%d of them before the last drop); the drops made %d Iggy sends uncertain (read back before answering); none stored twice",
		log.acks(), ackedDuringDrops, env.gatewayLogLines(mark, "maybe_written=true"))
}

// faultIggyDropDuringConsume: a franz-go group member reads a backlog in small fetches while
// the gateway's Iggy connections are dropped every 100 ms, then waits in long-poll fetches
// while they are dropped again and new records arrive. It reads every record (at-least-once)
// within bounded time, without being restarted.
func faultIggyDropDuringConsume(t *testing.T, _ *Env) {
	env := startMemIggyEnv(t)
	topic := env.CreateTopic(t, 2)
	ctx := ctxFor(t, 2*time.Minute)
	producer := env.Kgo(t)
	var want []string
	produce := func(prefix string, n int) {
		var recs []*kgo.Record
		for i := 0; i < n; i++ {
			v := fmt.Sprintf("%s-%04d", prefix, i)
			want = append(want, v)
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(v), Value: []byte(v)})
		}
		if err := producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", prefix, err)
		}
	}
	produce("backlog", 1000)

	consumer := env.Kgo(t, kgo.ConsumerGroup("g-"+topic), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// Small fetches: reading the backlog takes many requests, so drops land mid-read.
		kgo.FetchMaxBytes(8<<10), kgo.FetchMaxPartitionBytes(4<<10))
	var mu sync.Mutex
	seen := map[string]int{}
	stop, polled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			fs := consumer.PollFetches(pctx)
			cancel()
			mu.Lock()
			fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
			mu.Unlock()
		}
	}()
	defer func() { close(stop); <-polled }()
	readAll := func(what string) {
		waitFor(t, 60*time.Second, what, func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, v := range want {
				if seen[v] == 0 {
					return false
				}
			}
			return true
		})
	}

	dropping := make(chan struct{})
	dropped := make(chan int)
	go func() {
		drops := 0
		defer func() { dropped <- drops }()
		for {
			select {
			case <-dropping:
				return
			case <-time.After(100 * time.Millisecond):
				env.iggy.server.DropConnections()
				drops++
			}
		}
	}()
	readAll("the group member to read the 1000-record backlog while Iggy connections drop")
	close(dropping)
	drops := <-dropped

	// The member has read everything: its fetches now wait for data. Drop the connections
	// under them, then produce.
	time.Sleep(time.Second)
	env.iggy.server.DropConnections()
	time.Sleep(500 * time.Millisecond)
	env.iggy.server.DropConnections()
	produce("live", 100)
	readAll("the group member, waiting in long-poll fetches across drops, to read 100 new records")

	mu.Lock()
	dups := 0
	for _, c := range seen {
		dups += c - 1
	}
	mu.Unlock()
	t.Logf("read all %d records across %d connection drops; %d read more than once (at-least-once)", len(want), drops+2, dups)
}

// faultGatewayKilled: a group member commits offsets; an idempotent franz-go producer writes
// numbered records; the gateway is killed with SIGKILL mid-stream and started again on the
// same port. The producer carries on by itself and every record is acknowledged; every record
// acknowledged (before the kill or after) is stored as sent, once, in order; the committed
// offsets survive.
func faultGatewayKilled(t *testing.T, _ *Env) {
	env := startRestartableEnv(t)
	topic := env.CreateTopic(t, 2)
	group := "g-" + topic
	ctx := ctxFor(t, 2*time.Minute)
	producer := env.Kgo(t)
	log := newAckLog()

	produceNumbered(ctx, producer, topic, "seed", 20, nil, log)
	if err := producer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	member := env.Kgo(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	read := pollN(t, ctx, member, 20)
	if err := member.CommitRecords(ctx, read...); err != nil {
		t.Fatalf("commit: %v", err)
	}
	committed := map[int32]int64{}
	for _, r := range read {
		committed[r.Partition] = max(committed[r.Partition], r.Offset+1)
	}
	member.Close()

	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		produceNumbered(ctx, producer, topic, "live", 1<<30, stop, log)
	}()
	waitFor(t, 30*time.Second, "300 acknowledgements after the 20 seeds", func() bool { return log.acks() >= 320 })
	beforeKill := log.ackedSoFar()
	crash(t, env)
	acksAtRestart := log.acks()
	waitFor(t, 60*time.Second, "acknowledgements from the restarted gateway", func() bool { return log.acks() >= acksAtRestart+500 })
	close(stop)
	<-done
	if err := producer.Flush(ctx); err != nil {
		t.Fatalf("flush after the restart: %v (the producer did not recover)", err)
	}
	log.checkFailures(t)

	stored := readBack(t, ctx, env, topic)
	for _, r := range beforeKill {
		if got, ok := stored[partOffset{r.Partition, r.Offset}]; !ok || string(got.Value) != string(r.Value) {
			t.Errorf("record %s, acknowledged at %d/%d before the kill, is not there after the restart", r.Value, r.Partition, r.Offset)
		}
	}
	dups := log.checkStored(t, stored)
	checkExactlyOnceInOrder(t, stored, dups, log.rankOf)

	offsets, err := env.Admin(t).FetchOffsets(ctx, group)
	if err != nil || offsets.Error() != nil {
		t.Fatalf("fetch offsets after the restart: %v %v", err, offsets.Error())
	}
	for p, want := range committed {
		if o, ok := offsets.Lookup(topic, p); !ok || o.At != want {
			t.Errorf("committed offset of partition %d after the kill: %+v, want %d", p, o.Offset, want)
		}
	}
	t.Logf("%d records acknowledged before the kill, %d in all; none stored twice (the restarted gateway rebuilt the producer state); committed offsets %v kept",
		len(beforeKill), log.acks(), committed)
}

// crash kills the gateway with SIGKILL, leaves its port dead for a moment (clients meet
// refused connections), and starts it again on the same port.
func crash(t *testing.T, env *Env) {
	t.Helper()
	start := time.Now()
	env.kill(t)
	time.Sleep(300 * time.Millisecond)
	env.startAgain(t)
	t.Logf("gateway killed with SIGKILL, serving again on %s after %s", env.Bootstrap, time.Since(start).Round(time.Millisecond))
}

// pyKillProducer produces numbered records with librdkafka's idempotent producer at about
// 500 a second and prints one line per delivery report ("ok VALUE PARTITION OFFSET" or
// "err VALUE ERROR"), then "done N" with the number of records still undelivered after a
// bounded flush.
const pyKillProducer = `
import sys
from confluent_kafka import Producer

bootstrap, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})

def report(err, msg):
    if err is None:
        print("ok", msg.value().decode(), msg.partition(), msg.offset(), flush=True)
    else:
        print("err", msg.value().decode(), str(err).replace("\n", " "), flush=True)

for i in range(n):
    p.produce(topic, value=("py-%06d" % i).encode(), on_delivery=report)
    p.poll(0.002)
print("done", p.flush(60), flush=True)
`

// pythonGatewayKilled: librdkafka's idempotent producer writes numbered records; the gateway
// is killed with SIGKILL mid-stream and started again on the same port. The producer delivers
// every record by itself, every record it reported delivered is stored where it was told, and
// none is stored twice or out of order.
func pythonGatewayKilled(t *testing.T, _ *Env) {
	env := startRestartableEnv(t)
	reportingProducerFault(t, env, 2, 2000, "py-", func(topic string, n int) Cmd {
		return Cmd{Name: pythonBin(), Args: []string{"-c", pyKillProducer, env.Bootstrap, topic, strconv.Itoa(n)}}
	}, func() { crash(t, env) }, "the gateway's SIGKILL and restart")
}

// reportingProducerFault runs a client program (started by command) that produces n records
// <prefix>NNNNNN to a new topic of partitions partitions and prints one line per delivery
// report ("ok VALUE PARTITION OFFSET" or "err VALUE ERROR"), then "done N" with the number of
// records still undelivered. Once 300 deliveries are reported, fault runs. The program must
// deliver every record by itself; every record reported delivered must be stored where it was
// told, and none may be stored twice or out of order.
func reportingProducerFault(t *testing.T, env *Env, partitions, n int, prefix string, command func(topic string, n int) Cmd, fault func(), faultName string) {
	topic := env.CreateTopic(t, partitions)
	ctx := ctxFor(t, 3*time.Minute)
	p := startBackground(t, command(topic, n))
	delivered := func(lines []string) int {
		c := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "ok ") {
				c++
			}
		}
		return c
	}
	waitFor(t, 60*time.Second, "300 delivery reports", func() bool { return delivered(p.lines()) >= 300 })
	beforeFault := p.lines()
	fault()
	select {
	case <-p.Done():
	case <-time.After(90 * time.Second):
		t.Fatalf("the producer did not finish within 90 s of %s", faultName)
	}
	lines := p.lines()
	if len(lines) == 0 || lines[len(lines)-1] != "done 0" {
		_, exitErr := p.Exited()
		t.Fatalf("producer ended with %v and last line %q, want \"done 0\" (every record delivered)", exitErr, last(lines))
	}

	stored := readBack(t, ctx, env, topic)
	acked := map[string]partOffset{}
	var failed []string
	for i, l := range lines[:len(lines)-1] {
		f := strings.Fields(l)
		switch {
		case len(f) == 4 && f[0] == "ok":
			part, err1 := strconv.ParseInt(f[2], 10, 32)
			off, err2 := strconv.ParseInt(f[3], 10, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("bad delivery report %q", l)
			}
			po := partOffset{int32(part), off}
			acked[f[1]] = po
			if got, ok := stored[po]; !ok || string(got.Value) != f[1] {
				when := "after"
				if i < len(beforeFault) {
					when = "before"
				}
				t.Errorf("record %s, reported delivered at %d/%d %s %s, is not stored there", f[1], po.partition, po.offset, when, faultName)
			}
		case len(f) >= 2 && f[0] == "err":
			failed = append(failed, l)
		default:
			t.Fatalf("unexpected producer output %q", l)
		}
	}
	if len(failed) > 0 || len(acked) != n {
		t.Errorf("%d of %d records delivered; failures: %v", len(acked), n, failed)
	}
	copies := map[string]int{}
	for po, r := range stored {
		if _, ok := acked[string(r.Value)]; !ok {
			t.Errorf("stored record %s at %d/%d was never produced", short(r.Value), po.partition, po.offset)
		}
		copies[string(r.Value)]++
	}
	dups := 0
	for _, c := range copies {
		dups += c - 1
	}
	checkExactlyOnceInOrder(t, stored, dups, func(v string) int { n, _ := strconv.Atoi(strings.TrimPrefix(v, prefix)); return n })
	t.Logf("%d records delivered (%d before %s), each stored once, in order", len(acked), delivered(beforeFault), faultName)
}

func last(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// rawConn is a Kafka connection driven by hand, to do what client libraries do not: close the
// socket with a request parked, or stay silent in a group.
type rawConn struct {
	net.Conn
	corr int32
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{Conn: nc}
}

// frame encodes req as the next request of the connection.
func (c *rawConn) frame(req kmsg.Request) []byte {
	c.corr++
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("iggygw-e2e-faults")).AppendRequest(nil, req, c.corr)
}

func (c *rawConn) send(req kmsg.Request) error {
	_, err := c.Write(c.frame(req))
	return err
}

// roundTrip sends req and reads its response, within timeout.
func (c *rawConn) roundTrip(req kmsg.Request, timeout time.Duration) (kmsg.Response, error) {
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if err := c.send(req); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, fmt.Errorf("read %s response: %w", kmsg.NameForKey(req.Key()), err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 1<<20 {
		return nil, fmt.Errorf("%s response size %d out of range", kmsg.NameForKey(req.Key()), n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != c.corr {
		return nil, fmt.Errorf("response correlation id %d, want %d", got, c.corr)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	body = body[4:]
	if resp.IsFlexible() { // the response header's tagged fields: none expected
		if len(body) == 0 || body[0] != 0 {
			return nil, fmt.Errorf("%s response header with tagged fields", kmsg.NameForKey(req.Key()))
		}
		body = body[1:]
	}
	return resp, resp.ReadFrom(body)
}

// parkedFetch is a Fetch v11 of one partition from offset that waits up to wait for data.
func parkedFetch(topic string, offset int64, wait time.Duration) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 11
	req.MaxWaitMillis = int32(wait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	part := kmsg.NewFetchRequestTopicPartition()
	part.FetchOffset = offset
	part.PartitionMaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rt.Partitions = []kmsg.FetchRequestTopicPartition{part}
	req.Topics = []kmsg.FetchRequestTopic{rt}
	return req
}

// rawProduce is a Produce v7 (acks=all) of one record with value v to partition 0.
func rawProduce(topic, v string) *kmsg.ProduceRequest {
	rec := kmsg.Record{Value: []byte(v)}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // the length varint of 0 takes one byte
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 7, -1, 10_000
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = compressedBatch(0, rec.AppendTo(nil))
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	return req
}

// metricsEnv returns the IGGY_KAFKA_* setting that serves the gateway's /metrics on a free
// port, and that address.
func metricsEnv(t *testing.T) (setting, addr string) {
	t.Helper()
	addr, err := childproc.FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	return "IGGY_KAFKA_METRICS_ADDR=" + addr, addr
}

// scrapeMetrics returns the gateway's metrics, each series (name with labels) summed under its
// name.
func scrapeMetrics(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape /metrics: %v %s", err, resp.Status)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			continue
		}
		name := line[:i]
		if j := strings.IndexByte(name, '{'); j >= 0 {
			name = name[:j]
		}
		out[name] += v
	}
	return out
}

const (
	metricInFlight   = "iggy_gateway_kafka_requests_in_flight"
	metricConnsOpen  = "iggy_gateway_kafka_connections_open"
	metricGoroutines = "go_goroutines"
	metricHeapInuse  = "go_memstats_heap_inuse_bytes"
)

// faultDisconnectMidFetch: two rounds of 100 clients each send a Fetch that waits for data
// (or half of one) and close the socket at once. After each round the gateway's goroutines,
// open connections and requests in flight go back to where they were (the parked fetches
// end, at the latest, when their wait does), its heap does not grow with the rounds, and a
// producer and a consumer that come afterwards are served.
func faultDisconnectMidFetch(t *testing.T, _ *Env) {
	setting, maddr := metricsEnv(t)
	env := startMemIggyEnv(t, setting)
	topic := env.CreateTopic(t, 1)
	ctx := ctxFor(t, 2*time.Minute)
	probe := env.Kgo(t)
	if err := probe.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("first")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	probe.Close() // its connections would count as open ones
	waitFor(t, 10*time.Second, "the gateway to see the probe's connections closed", func() bool {
		return scrapeMetrics(t, maddr)[metricConnsOpen] == 0
	})
	base := scrapeMetrics(t, maddr)
	const wait = 2 * time.Second
	const clients = 100
	for round := 1; round <= 2; round++ {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 20)
		for i := 0; i < clients; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				c := dialRaw(t, env.Bootstrap)
				frame := c.frame(parkedFetch(topic, 1, wait))
				if i%4 == 3 {
					frame = frame[:len(frame)/2] // gone mid-frame
				}
				if _, err := c.Write(frame); err != nil {
					t.Errorf("write fetch: %v", err)
				}
				c.Close()
			}()
		}
		wg.Wait()
		closed := time.Now()
		var m map[string]float64
		waitFor(t, maxParkedFetch+5*time.Second, fmt.Sprintf("round %d: the gateway to release the closed connections", round), func() bool {
			m = scrapeMetrics(t, maddr)
			return m[metricInFlight] == 0 && m[metricConnsOpen] == 0 && m[metricGoroutines] <= base[metricGoroutines]+5
		})
		t.Logf("round %d: %d clients closed with a Fetch parked (max_wait %s); released after %s; goroutines %v (before: %v), heap in use %.1f MiB (before: %.1f MiB)",
			round, clients, wait, time.Since(closed).Round(10*time.Millisecond), m[metricGoroutines], base[metricGoroutines],
			m[metricHeapInuse]/(1<<20), base[metricHeapInuse]/(1<<20))
		if grown := m[metricHeapInuse] - base[metricHeapInuse]; grown > 32<<20 {
			t.Errorf("round %d: heap in use grew by %.1f MiB", round, grown/(1<<20))
		}
	}

	cl := env.Kgo(t)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce after the disconnects: %v", err)
	}
	consumer := env.Kgo(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := pollN(t, ctx, consumer, 2)
	if string(got[0].Value) != "first" || string(got[1].Value) != "after" {
		t.Errorf("read %q, %q after the disconnects, want first, after", got[0].Value, got[1].Value)
	}
}

// maxParkedFetch is the gateway's cap on a Fetch's max_wait (internal/broker).
const maxParkedFetch = 18 * time.Second

// faultDisconnectReleasesParked: a request parked for a client that has closed its connection
// is released at once, not when its wait ends: ten Fetch requests waiting 15 s for data, and a
// JoinGroup waiting (up to a 20 s rebalance timeout) for a silent member to rejoin. Kafka's
// clients give up on a request by closing the connection, so a gateway that keeps such
// requests holds goroutines and connection state for as long as the longest wait.
func faultDisconnectReleasesParked(t *testing.T, _ *Env) {
	setting, maddr := metricsEnv(t)
	env := startMemIggyEnv(t, setting)
	topic := env.CreateTopic(t, 1)
	inFlight := func() float64 { return scrapeMetrics(t, maddr)[metricInFlight] }
	// released waits up to 3 s for nothing to be in flight; if something still is, it waits up
	// to limit more to say how long it was held.
	released := func(what string, closed time.Time, limit time.Duration) {
		t.Helper()
		deadline := closed.Add(3 * time.Second)
		for inFlight() > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if inFlight() == 0 {
			t.Logf("%s released %s after the client closed", what, time.Since(closed).Round(10*time.Millisecond))
			return
		}
		held := "still held"
		for deadline = closed.Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if inFlight() == 0 {
				held = "held until " + time.Since(closed).Round(100*time.Millisecond).String()
				break
			}
		}
		t.Errorf("%s still in flight 3 s after its client closed the connection (%s after it)", what, held)
	}

	var conns []*rawConn
	for i := 0; i < 10; i++ {
		c := dialRaw(t, env.Bootstrap)
		if err := c.send(parkedFetch(topic, 0, 15*time.Second)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	waitFor(t, 10*time.Second, "ten parked fetches", func() bool { return inFlight() == 10 })
	for _, c := range conns {
		c.Close()
	}
	released("ten Fetch requests (max_wait 15 s)", time.Now(), 16*time.Second)

	group := "g-" + topic
	meta := (&kmsg.ConsumerMemberMetadata{Topics: []string{topic}}).AppendTo(nil)
	join := func(member string) *kmsg.JoinGroupRequest {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version = 3
		req.Group, req.MemberID, req.ProtocolType = group, member, "consumer"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 30000, 20000
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta}}
		return req
	}
	// A silent member: it joins and syncs as leader, then sends nothing.
	silent := dialRaw(t, env.Bootstrap)
	resp, err := silent.roundTrip(join(""), 30*time.Second)
	if err != nil {
		t.Fatalf("silent member's JoinGroup: %v", err)
	}
	joined := resp.(*kmsg.JoinGroupResponse)
	if err := kerr.ErrorForCode(joined.ErrorCode); err != nil {
		t.Fatalf("silent member's JoinGroup: %v", err)
	}
	syncReq := kmsg.NewPtrSyncGroupRequest()
	syncReq.Version = 1
	syncReq.Group, syncReq.Generation, syncReq.MemberID = group, joined.Generation, joined.MemberID
	assignment := (&kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: topic, Partitions: []int32{0}}}}).AppendTo(nil)
	syncReq.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: joined.MemberID, MemberAssignment: assignment}}
	if resp, err := silent.roundTrip(syncReq, 10*time.Second); err != nil || resp.(*kmsg.SyncGroupResponse).ErrorCode != 0 {
		t.Fatalf("silent member's SyncGroup: %v %+v", err, resp)
	}
	// A second member's JoinGroup waits for the silent one to rejoin; its client gives up.
	joiner := dialRaw(t, env.Bootstrap)
	if err := joiner.send(join("")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the second member's JoinGroup to park", func() bool { return inFlight() == 1 })
	time.Sleep(500 * time.Millisecond)
	if inFlight() != 1 {
		t.Fatalf("the second member's JoinGroup was answered within 0.5 s; it should wait for the silent member")
	}
	joiner.Close()
	released("a JoinGroup waiting for a rebalance (rebalance timeout 20 s)", time.Now(), 21*time.Second)
}

// faultIggyRestart: Iggy goes away and comes back on the same address (empty: the in-memory
// server keeps nothing). Meanwhile the gateway stays up, answers ApiVersions, reports itself
// not ready and answers Produce and Fetch with retriable errors in bounded time; once Iggy is back it
// reconnects by itself, reports ready, and serves writes and reads from the clients it already
// had. Then Iggy restarts on its data twice while an idempotent producer writes
// (iggyRestartsDuringProduce).
func faultIggyRestart(t *testing.T, _ *Env) {
	setting, maddr := metricsEnv(t)
	env := startMemIggyEnv(t, setting)
	topic := env.CreateTopic(t, 1)
	ctx := ctxFor(t, 2*time.Minute)
	producer := env.Kgo(t)
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	ready := func() int {
		resp, err := http.Get("http://" + maddr + "/readyz")
		if err != nil {
			t.Fatalf("GET /readyz: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := ready(); code != http.StatusOK {
		t.Fatalf("/readyz %d before the Iggy restart, want 200", code)
	}

	env.iggy.restartMem(t, func() {
		if _, err := probeAPIVersions(env.Bootstrap, 10*time.Second); err != nil {
			t.Errorf("ApiVersions while Iggy is down: %v", err)
		}
		if code := ready(); code == http.StatusOK {
			t.Errorf("/readyz 200 while Iggy is down")
		}
		// Each request comes back in bounded time with a retriable error that does not say
		// the topic is gone.
		c := dialRaw(t, env.Bootstrap)
		for _, req := range []kmsg.Request{rawProduce(topic, "while down"), parkedFetch(topic, 1, 500*time.Millisecond)} {
			start := time.Now()
			resp, err := c.roundTrip(req, 30*time.Second)
			if err != nil {
				t.Errorf("%s while Iggy is down: %v", kmsg.NameForKey(req.Key()), err)
				continue
			}
			var code int16
			switch r := resp.(type) {
			case *kmsg.ProduceResponse:
				code = r.Topics[0].Partitions[0].ErrorCode
			case *kmsg.FetchResponse:
				code = r.Topics[0].Partitions[0].ErrorCode
			}
			err = kerr.ErrorForCode(code)
			if !kerr.IsRetriable(err) || errors.Is(err, kerr.UnknownTopicOrPartition) {
				t.Errorf("%s while Iggy is down: error %v, want a retriable one that does not say the topic is gone", kmsg.NameForKey(req.Key()), err)
			}
			t.Logf("%s while Iggy is down: %v after %s", kmsg.NameForKey(req.Key()), err, time.Since(start).Round(time.Millisecond))
		}
	})
	if err := env.iggy.createTopic(ctx, topic, 1); err != nil {
		t.Fatalf("create %s again on the restarted Iggy: %v", topic, err)
	}
	waitFor(t, 30*time.Second, "/readyz 200 once Iggy is back", func() bool { return ready() == http.StatusOK })
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce with the same client once Iggy is back: %v", err)
	}
	consumer := env.Kgo(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := pollN(t, ctx, consumer, 1)
	if string(got[0].Value) != "after" || got[0].Offset != 0 {
		t.Errorf("read %q at offset %d once Iggy is back, want \"after\" at 0 (the restarted in-memory server starts empty)", got[0].Value, got[0].Offset)
	}
	if dead, err := env.gateway.Exited(); dead {
		t.Errorf("the gateway exited: %v", err)
	}
	iggyRestartsDuringProduce(t, ctx, env)
}

// iggyRestartsDuringProduce: an idempotent franz-go producer writes numbered records to a
// topic created through the gateway (so with its flush mode, write: acknowledged records
// survive an Iggy process crash, docs/DURABILITY.md) while Iggy crashes and restarts on its
// data twice (the in-memory server's process-crash simulation: every connection dropped, the
// unsaved tail lost). Every record is acknowledged, each stored once, in order: sends the
// crash cut off are read back after the restart, not written again.
func iggyRestartsDuringProduce(t *testing.T, ctx context.Context, env *Env) {
	topic := TopicName(t)
	if resp, err := env.Admin(t).CreateTopic(ctx, 3, 1, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", topic, err, resp.Err)
	}
	producer := env.Kgo(t)
	log := newAckLog()
	mark := env.gateway.Output.Mark()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		produceNumbered(ctx, producer, topic, "restart", 1<<30, stop, log)
	}()
	var lost uint64
	for i := 1; i <= 2; i++ {
		acks := log.acks()
		waitFor(t, 30*time.Second, "300 more acknowledgements", func() bool { return log.acks() >= acks+300 })
		lost += env.iggy.server.Crash(memserver.ProcessCrash)
	}
	acks := log.acks()
	waitFor(t, 60*time.Second, "acknowledgements after the second restart", func() bool { return log.acks() >= acks+300 })
	close(stop)
	<-done
	if err := producer.Flush(ctx); err != nil {
		t.Fatalf("flush: %v (records still unacknowledged: the producer did not recover)", err)
	}
	log.checkFailures(t)
	stored := readBack(t, ctx, env, topic)
	dups := log.checkStored(t, stored)
	checkExactlyOnceInOrder(t, stored, dups, log.rankOf)
	// checkStored finds every acknowledged record; what the crashes lost was elsewhere (the
	// first topic, created natively with Iggy's buffering).
	t.Logf("%d records acknowledged across two Iggy restarts on their data (which lost %d unsaved messages of other topics); %d Iggy sends made uncertain and read back; none stored twice",
		log.acks(), lost, env.gatewayLogLines(mark, "maybe_written=true"))
}
