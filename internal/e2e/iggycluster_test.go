package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Behind an Iggy cluster (docs/DEPLOYMENT.md §7): one gateway given the three nodes of an Iggy
// cluster (the in-memory cluster, or the real one of IGGY_TEST_CLUSTER_ADDRS), a backup listed
// first. Every client family runs scenarios of its own test through it, and a Java idempotent
// producer keeps writing while an Iggy node is killed.

// clusterElectionDelay is how long the in-memory cluster has no primary after the primary
// dies: about what a real 3-node Iggy cluster on one machine took to elect a new one (issue 24
// measured some 5 s; shorter keeps the suite fast, and the gateway's wait is the same code).
const clusterElectionDelay = 2 * time.Second

// startIggyClusterEnv starts a gateway bridged to an Iggy cluster of its own
// (startIggyClusterBackend) with extraEnv (IGGY_KAFKA_* settings). Both are stopped when t ends.
func startIggyClusterEnv(t *testing.T, extraEnv ...string) *Env {
	t.Helper()
	if os.Getenv("IGGYGW_E2E_BOOTSTRAP") != "" {
		t.Skip("needs a gateway started by the harness (IGGYGW_E2E_BOOTSTRAP is set)")
	}
	backend := startIggyClusterBackend(t, clusterElectionDelay)
	t.Cleanup(backend.close)
	env, err := startGatewayEnv(backend, extraEnv...)
	if err != nil {
		t.Fatalf("start gateway: %v", err)
	}
	t.Cleanup(func() { env.stopGateway(t) })
	t.Logf("gateway %s bridged to the %s", env.Bootstrap, backend.describe())
	return env
}

// clusterBackend is the Backend of results recorded behind the cluster startIggyClusterEnv
// starts (clustertest.Start picks it by the same variable).
func clusterBackend() string {
	return clusterKind(os.Getenv("IGGY_TEST_CLUSTER_ADDRS") != "")
}

// clusterRoundTrips are, per client family, the scenarios of its own test that run behind the
// cluster too: those that create topics through the Kafka API (kafka-topics --create, the
// admin clients) and those that produce records and read them back. kcat cannot create
// topics; its group scenario stores its offsets in the gateway's coordinator log instead.
var clusterRoundTrips = []struct {
	fam       Family
	scenarios func() []Scenario
	names     []string
}{
	{javaFamily, javaScenarios, []string{"quickstart", "topics-admin"}},
	{kcatFamily, kcatScenarios, []string{"produce-consume-none", "produce-consume-zstd"}},
	{pythonFamily, func() []Scenario { return pythonScenarios(pythonScript) }, []string{"produce-consume-none", "group", "admin"}},
	{kafkaPythonFamily, func() []Scenario { return pythonScenarios(kafkaPythonScript) }, []string{"produce-consume-none", "admin"}},
	{franzFamily, franzScenarios, []string{"produce-consume-none", "group", "admin"}},
	{saramaFamily, saramaScenarios, []string{"produce-consume-none", "admin"}},
	{kafkaGoFamily, kafkaGoScenarios, []string{"produce-consume-none", "admin"}},
	{kafkajsFamily, kafkajsScenarios, []string{"produce-none", "group-consume", "admin"}},
}

// pick returns the scenarios named, failing t if one does not exist (a renamed scenario must
// not drop out of the cluster run silently).
func pick(t *testing.T, all []Scenario, names []string) []Scenario {
	t.Helper()
	var out []Scenario
	for _, n := range names {
		i := slices.IndexFunc(all, func(s Scenario) bool { return s.Name == n })
		if i < 0 {
			t.Fatalf("no scenario %q", n)
		}
		out = append(out, all[i])
	}
	return out
}

// TestIggyClusterClients: every client family creates topics and round-trips records through
// one gateway given the three nodes of an Iggy cluster, a backup first.
func TestIggyClusterClients(t *testing.T) {
	if testing.Short() && !required() {
		t.Skip("end-to-end scenarios do not run in -short mode")
	}
	env := startIggyClusterEnv(t)
	onCluster := func(t *testing.T) *Env { env.watch(t); return env }
	for _, f := range clusterRoundTrips {
		t.Run(f.fam.Name, func(t *testing.T) {
			runScenariosOn(t, f.fam, pick(t, f.scenarios(), f.names), clusterBackend(), onCluster)
		})
	}
	if n := env.gatewayLogLines(0, "event=iggy_failover"); n != 0 {
		t.Errorf("%d moves to another Iggy primary while no node died", n)
	}
}

// TestIggyClusterFailoverJava: the Java client's idempotent producer (acks=all) writes 5000
// records through a gateway in front of an Iggy cluster while an Iggy node dies: the primary,
// a backup, or (rejoin) the old primary comes back and the primary after it dies; or while
// every node is restarted in turn, the primary last (rolling-restart). Every record
// is delivered by the producer itself, stored where its delivery report said, once, in order;
// the gateway, never restarted, then creates a topic with replication factor 3 and
// round-trips a record on it.
func TestIggyClusterFailoverJava(t *testing.T) {
	scenario := func(name string, fault func(t *testing.T, env *Env) (failovers int)) Scenario {
		return Scenario{Name: name, Needs: faultProduceNeeds, Covers: []Cell{CellIdempotence}, Run: func(t *testing.T, env *Env) {
			env.iggy.cluster.RequireFaults(t)
			var want int
			reportingProducerFault(t, env, 2, 5000, "java-", func(topic string, n int) Cmd {
				return javaProducerCmd(t, env.Bootstrap, topic, n)
			}, func() { want = fault(t, env) }, name)
			createAndRoundTrip(t, env, TopicName(t))
			got := env.gatewayLogLines(0, "event=iggy_failover")
			for _, l := range strings.Split(env.gateway.Output.String(), "\n") {
				if strings.Contains(l, "event=iggy_failover") {
					t.Logf("gateway: %s", l)
				}
			}
			// A real cluster may change views more than once for one death; the in-memory one
			// elects once.
			if got != want && (!env.iggy.cluster.Real() || got < want || want == 0) {
				t.Errorf("the gateway logged %d moves to another Iggy primary, want %d", got, want)
			}
		}}
	}
	runScenariosOn(t, javaFamily, []Scenario{
		scenario("failover-primary-killed", func(t *testing.T, env *Env) int {
			c := env.iggy.cluster
			p := env.iggy.primary(t)
			c.Kill(t, p)
			t.Cleanup(func() { c.Restart(t, p) })
			t.Logf("Iggy primary, node %d, killed", p)
			return 1
		}),
		scenario("failover-backup-killed", func(t *testing.T, env *Env) int {
			c := env.iggy.cluster
			b := c.Others(env.iggy.primary(t))[0]
			c.Kill(t, b)
			t.Cleanup(func() { c.Restart(t, b) })
			t.Logf("Iggy backup, node %d, killed", b)
			return 0
		}),
		scenario("failover-old-primary-rejoins", func(t *testing.T, env *Env) int {
			c := env.iggy.cluster
			old := env.iggy.primary(t)
			c.Kill(t, old)
			// The gateway has moved once the new primary is found (a write through it is
			// acknowledged); then the old primary comes back as a backup, and the new primary
			// dies: the next primary needs the rejoined node for its majority.
			createAndRoundTrip(t, env, TopicName(t))
			c.Restart(t, old)
			now := env.iggy.primary(t)
			c.Kill(t, now)
			t.Cleanup(func() { c.Restart(t, now) })
			t.Logf("Iggy primary, node %d, killed; it rejoined as a backup and then the next primary, node %d, was killed", old, now)
			return 2
		}),
		// docs/DEPLOYMENT.md §7's rolling restart: each backup stopped and started again in
		// turn, then the primary; only the primary's restart moves the gateway. The in-memory
		// cluster's node is caught up when Restart returns; on a real cluster the next kill
		// waits only for IGGY_TEST_CLUSTER_RESTART_COMMAND, which must therefore return once
		// the node has rejoined, not merely listens, or two nodes may be down at once.
		scenario("rolling-restart", func(t *testing.T, env *Env) int {
			c := env.iggy.cluster
			p := env.iggy.primary(t)
			for _, n := range append(c.Others(p), p) {
				c.Kill(t, n)
				time.Sleep(500 * time.Millisecond)
				c.Restart(t, n)
				if n == p {
					t.Logf("Iggy nodes %v (backups) and then %d (the primary) restarted one at a time", c.Others(p), p)
				}
			}
			return 1
		}),
	}, clusterBackend(), func(t *testing.T) *Env { return startIggyClusterEnv(t) })
}

// createAndRoundTrip creates topic through the Kafka API with replication factor 3 (what a
// 3-node Iggy cluster holds, and Kafka's default for internal topics), produces one record to
// it with acks=all and reads it back, through env.
func createAndRoundTrip(t *testing.T, env *Env, topic string) {
	t.Helper()
	ctx := ctxFor(t, time.Minute)
	resp, err := env.Admin(t).CreateTopic(ctx, 1, 3, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s with replication factor 3: %v", topic, err)
	}
	if resp.ReplicationFactor != 3 {
		t.Errorf("topic %s created with replication factor %d, want 3", topic, resp.ReplicationFactor)
	}
	value := fmt.Sprintf("after-%d", time.Now().UnixNano())
	p := env.Kgo(t, kgo.RequiredAcks(kgo.AllISRAcks()))
	if err := p.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
	got := pollN(t, ctx, env.Kgo(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())), 1)
	if string(got[0].Value) != value || got[0].Offset != 0 {
		t.Errorf("read back %q at offset %d from %s, want %q at 0", got[0].Value, got[0].Offset, topic, value)
	}
}

// ledger is a consumer group without members whose committed offset of one partition a loop
// raises by one at a time through the Kafka API (OffsetCommit with generation -1, as
// kafka-consumer-groups --reset-offsets sends it). A commit that fails is sent again with the
// same offset until it is acknowledged, so the last acknowledged offset is the highest ever
// sent: whatever the group reads back afterwards must equal it exactly.
type ledger struct {
	group, topic string
	coordinator  int32

	mu        sync.Mutex
	last      int64 // the last acknowledged commit
	failures  int   // commits answered with an error (sent again)
	afterMark int   // commits acknowledged since mark
}

func (l *ledger) acked() (last int64, failures, afterMark int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last, l.failures, l.afterMark
}

func (l *ledger) mark() { l.mu.Lock(); l.afterMark = 0; l.mu.Unlock() }

// run commits until stop is closed, through adm.
func (l *ledger) run(ctx context.Context, adm *kadm.Client, stop <-chan struct{}) {
	for next := int64(1); ; {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
		var offs kadm.Offsets
		offs.Add(kadm.Offset{Topic: l.topic, Partition: 0, At: next, LeaderEpoch: -1, Metadata: strconv.FormatInt(next, 10)})
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := adm.CommitOffsets(cctx, l.group, offs)
		cancel()
		if err == nil {
			err = resp.Error()
		}
		l.mu.Lock()
		if err != nil {
			l.failures++
		} else {
			l.last = next
			l.afterMark++
			next++
		}
		l.mu.Unlock()
	}
}

// ledgersOnEveryGateway returns one ledger per gateway of c: groups named after topic whose
// coordinator is that gateway, so that commits go through every gateway.
func ledgersOnEveryGateway(t *testing.T, c *gatewayCluster, topic string) []*ledger {
	t.Helper()
	byNode := map[int32]*ledger{}
	for i := 0; len(byNode) < len(c.addrs) && i < 200; i++ {
		group := fmt.Sprintf("ledger-%s-%d", topic, i)
		node, err := groupCoordinator(c.addrs[0], group)
		if err != nil {
			t.Fatalf("coordinator of %s: %v", group, err)
		}
		if _, ok := byNode[node]; !ok {
			byNode[node] = &ledger{group: group, topic: topic, coordinator: node}
		}
	}
	if len(byNode) < len(c.addrs) {
		t.Fatalf("200 group names are coordinated by %d of %d gateways", len(byNode), len(c.addrs))
	}
	var out []*ledger
	for i := range c.addrs {
		out = append(out, byNode[c.nodeID(i)])
	}
	return out
}

// TestIggyClusterTwoGatewaysOffsets: two gateways (BROKERS, NODE_ID: docs/DEPLOYMENT.md) in
// front of one Iggy cluster, each given every Iggy node, a backup first. An idempotent
// producer writes through both, a two-member group consumes and commits, and a group
// coordinated by each gateway has its offset committed one step at a time; the Iggy primary is
// killed. Both gateways follow the new primary without a restart; every acknowledged record is
// stored exactly once, in order, and given to the group; the group's committed offsets never
// pass the end nor go back; and each ledger group reads back, through either gateway, exactly
// the last offset (and metadata) whose commit was acknowledged.
func TestIggyClusterTwoGatewaysOffsets(t *testing.T) {
	if testing.Short() && !required() {
		t.Skip("end-to-end scenarios do not run in -short mode")
	}
	if os.Getenv("IGGYGW_E2E_BOOTSTRAP") != "" {
		t.Skip("needs gateways started by the harness (IGGYGW_E2E_BOOTSTRAP is set)")
	}
	backend := startIggyClusterBackend(t, clusterElectionDelay)
	t.Cleanup(backend.close)
	cl := backend.cluster
	cl.RequireFaults(t)
	c := startGatewayClusterOn(t, backend, 2)
	t.Logf("gateways %s bridged to the %s", c.env.Bootstrap, backend.describe())
	ctx := ctxFor(t, 3*time.Minute)
	waitFor(t, 20*time.Second, "both gateways listing two brokers", func() bool {
		for _, a := range c.addrs {
			md, err := gatewayMetadata(a)
			if err != nil || len(md.Brokers) != 2 {
				return false
			}
		}
		return true
	})
	topic := c.env.CreateTopic(t, 4)
	waitFor(t, 20*time.Second, "both gateways listing "+topic, func() bool {
		for _, a := range c.addrs {
			md, err := gatewayMetadata(a, topic)
			if err != nil || len(leaders(md, topic)) != 4 {
				return false
			}
		}
		return true
	})
	w := startClusterWork(t, ctx, c.env, topic, "g-"+topic, 2)
	ledgers := ledgersOnEveryGateway(t, c, topic)
	stopLedgers := make(chan struct{})
	var ledgersDone sync.WaitGroup
	for _, l := range ledgers {
		adm := c.env.Admin(t)
		ledgersDone.Go(func() { l.run(ctx, adm, stopLedgers) })
	}
	progress := func(acks, consumed, commits int) func() bool {
		return func() bool {
			n, _ := w.got.count()
			for _, l := range ledgers {
				if _, _, after := l.acked(); after < commits {
					return false
				}
			}
			return w.log.acks() >= acks && n >= consumed
		}
	}
	waitFor(t, 60*time.Second, "300 acknowledgements, 200 records consumed, 20 commits of each ledger", progress(300, 200, 20))

	primary := backend.primary(t)
	acksAtKill := w.log.acks()
	consumedAtKill, _ := w.got.count()
	w.got.mark(w.watch.committed())
	for _, l := range ledgers {
		l.mark()
	}
	cl.Kill(t, primary)
	t.Cleanup(func() { cl.Restart(t, primary) })
	t.Logf("Iggy primary, node %d, killed", primary)
	waitFor(t, 60*time.Second, "300 more acknowledgements, 200 more records consumed, 20 more commits of each ledger after the kill",
		progress(acksAtKill+300, consumedAtKill+200, 20))
	close(stopLedgers)
	ledgersDone.Wait()

	samples := w.finish(t, ctx, 60*time.Second)
	if behind := w.got.resumedBehind(); len(behind) > 0 {
		t.Errorf("%d records given to the group again below the offsets committed before the kill, e.g. %v", len(behind), behind[:min(5, len(behind))])
	}
	for _, l := range ledgers {
		last, failures, after := l.acked()
		for i, addr := range c.addrs {
			// A client bootstrapped with this gateway alone: it asks this gateway where the
			// group's coordinator is, then the coordinator.
			seeded := &Env{Bootstrap: addr}
			got, err := seeded.Admin(t).FetchOffsets(ctx, l.group)
			if err == nil {
				err = got.Error()
			}
			if err != nil {
				t.Fatalf("fetch the offsets of %s through gateway %d: %v", l.group, c.nodeID(i), err)
			}
			o, ok := got.Lookup(topic, 0)
			if !ok || o.At != last || o.Metadata != strconv.FormatInt(last, 10) {
				t.Errorf("%s (coordinated by gateway %d) read through gateway %d: offset %d metadata %q, want the last acknowledged commit %d",
					l.group, l.coordinator, c.nodeID(i), o.At, o.Metadata, last)
			}
		}
		t.Logf("%s, coordinated by gateway %d: %d commits acknowledged (%d after the kill), %d answered with an error and sent again; offset %d read back through both gateways",
			l.group, l.coordinator, last, after, failures, last)
	}
	for i, g := range c.nodes {
		if n := strings.Count(g.Output.String(), "event=iggy_failover"); n < 1 || (!cl.Real() && n != 1) {
			t.Errorf("gateway %d logged %d moves to another Iggy primary, want 1", c.nodeID(i), n)
		}
	}
	distinct, repeats := w.got.count()
	t.Logf("%d records acknowledged (%d before the kill), stored once each, in order; the group was given %d (%d again); %d samples of its committed offsets, none beyond the end or going back",
		w.log.acks(), acksAtKill, distinct, repeats, samples)
}
