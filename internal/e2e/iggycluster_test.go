package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

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
// a backup, or (rejoin) the old primary comes back and the primary after it dies. Every record
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
	}, clusterBackend(), func(t *testing.T) *Env { return startIggyClusterEnv(t) })
}

// createAndRoundTrip creates topic through the Kafka API with replication factor 3 (what a 3-node Iggy
// cluster holds, and Kafka's default for internal topics), produces one record to it with
// acks=all and reads it back, through env.
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
