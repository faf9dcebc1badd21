package iggy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/clustertest"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// The cluster tests run against the in-memory cluster, or a real Iggy cluster named by
// IGGY_TEST_CLUSTER_ADDRS (package clustertest).

// failoverBudget is how soon after the primary's death writes must succeed again: Iggy's own
// cluster test gives a client 10 s.
const failoverBudget = 10 * time.Second

// moves records the client's PrimaryObserver events.
type moves struct {
	nopObserver
	mu  sync.Mutex
	got []move
}

type move struct {
	from, to string
	resume   time.Duration
}

func (m *moves) PrimaryChanged(from, to string, resume time.Duration) {
	m.mu.Lock()
	m.got = append(m.got, move{from, to, resume})
	m.mu.Unlock()
}

func (m *moves) list() []move {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]move(nil), m.got...)
}

func clusterConfig(c *clustertest.Cluster, seeds string) Config {
	return Config{Addr: seeds, Username: c.Username, Password: c.Password, PoolSize: 2, PingInterval: -1}
}

func dialCluster(t *testing.T, c *clustertest.Cluster, seeds string, obs Observer) *Client {
	t.Helper()
	cfg := clusterConfig(c, seeds)
	cfg.Observer = obs
	cl, err := Dial(testCtx(t), cfg)
	if err != nil {
		t.Fatalf("Dial %s: %v", seeds, err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// primaryOf returns the node the cluster's roster names leader, read on node i itself.
func rosterOf(t *testing.T, c *clustertest.Cluster, i int) *ClusterMetadata {
	t.Helper()
	cfg, err := clusterConfig(c, c.Addrs[i]).normalize()
	if err != nil {
		t.Fatal(err)
	}
	cn, err := dialConn(testCtx(t), cfg, newRouter(cfg, routeFixed))
	if err != nil {
		t.Fatalf("login on node %d: %v", i, err)
	}
	defer cn.Close()
	md, err := cn.GetClusterMetadata(testCtx(t))
	if err != nil {
		t.Fatalf("GetClusterMetadata on node %d: %v", i, err)
	}
	return md
}

// currentPrimary finds the primary with a client given every node.
func currentPrimary(t *testing.T, c *clustertest.Cluster) int {
	t.Helper()
	cl := dialCluster(t, c, c.Seeds(0, 1, 2), nil)
	p := c.Index(cl.Primary())
	if p < 0 {
		t.Fatalf("the client's primary %q is none of %v", cl.Primary(), c.Addrs)
	}
	cl.Close()
	return p
}

func TestClusterRosterRoles(t *testing.T) {
	c := clustertest.Start(t, time.Second)
	p := currentPrimary(t, c)
	for i := range c.Addrs {
		md := rosterOf(t, c, i)
		if len(md.Nodes) != 3 {
			t.Fatalf("node %d: roster of %d nodes", i, len(md.Nodes))
		}
		leaders := 0
		for _, n := range md.Nodes {
			if n.Role == wire.NodeRoleLeader {
				leaders++
				if got := c.Index(nodeAddr(n)); got != p {
					t.Errorf("node %d names node %d (%s) leader, the client found %d", i, got, nodeAddr(n), p)
				}
			}
			if n.Status != wire.NodeStatusHealthy {
				t.Errorf("node %d reports %s with status %d, want healthy", i, n.Name, n.Status)
			}
			if c.Index(nodeAddr(n)) < 0 {
				t.Errorf("node %d reports %s at %s, not one of %v", i, n.Name, nodeAddr(n), c.Addrs)
			}
		}
		if leaders != 1 {
			t.Errorf("node %d reports %d leaders", i, leaders)
		}
	}
}

func TestClusterSeedsWithABackupFirstReachThePrimary(t *testing.T) {
	c := clustertest.Start(t, time.Second)
	p := currentPrimary(t, c)
	backups := c.Others(p)
	for _, tt := range []struct {
		name  string
		seeds string
	}{
		{"backups first", c.Seeds(backups[0], backups[1], p)},
		{"one backup only", c.Seeds(backups[1])}, // the roster it reads names the primary
	} {
		t.Run(tt.name, func(t *testing.T) {
			obs := &moves{}
			cl := dialCluster(t, c, tt.seeds, obs)
			waitFor(t, "the client to reach the primary", func() bool { return c.Index(cl.Primary()) == p })
			if _, err := cl.CreateStream(testCtx(t), unique("seeded")); err != nil {
				t.Fatalf("CreateStream through %s: %v", tt.seeds, err)
			}
			if cl.ClusterSize() != 3 || cl.Failovers() != 0 {
				t.Errorf("ClusterSize %d Failovers %d, want 3 and 0", cl.ClusterSize(), cl.Failovers())
			}
			// A move the roster read after Dial announced is reported right after the router
			// took it.
			waitFor(t, "a PrimaryChanged event naming the primary", func() bool {
				m := obs.list()
				return len(m) > 0 && c.Index(m[len(m)-1].to) == p && m[len(m)-1].from == ""
			})
		})
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(failoverBudget)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sendLog is what concurrent senders learnt about each message: acknowledged, outcome unknown
// (the connection dropped after sending), or refused without being applied.
type sendLog struct {
	mu                         sync.Mutex
	acked, unknown, notApplied map[string]bool
	firstAckAfterKill          time.Time
}

func (l *sendLog) record(t *testing.T, payload string, err error, killed time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.acked[payload] = true
		if !killed.IsZero() && l.firstAckAfterKill.IsZero() {
			l.firstAckAfterKill = time.Now()
		}
	case MaybeApplied(err):
		l.unknown[payload] = true
	case errors.Is(err, ErrConnection) || IsCode(err, CodeTransientNotAccepted):
		l.notApplied[payload] = true
	default:
		t.Errorf("send %s: an error that is neither success, outcome unknown nor not applied: %v", payload, err)
	}
}

// checkExactlyOnce polls the partition and checks: every acknowledged message once, a message of
// unknown outcome at most once, a message not applied never, nothing else.
func checkExactlyOnce(t *testing.T, cl *Client, stream, topic string, l *sendLog) {
	t.Helper()
	seen := map[string]int{}
	part := uint32(0)
	for offset := uint64(0); ; {
		p, err := cl.PollMessages(testCtx(t), PollRequest{Consumer: Consumer{Kind: 1, ID: ID(1)}, Stream: Name(stream), Topic: Name(topic),
			Partition: &part, Strategy: PollingStrategy{Kind: PollOffset, Value: offset}, Count: 500})
		if err != nil {
			t.Fatalf("poll at %d: %v", offset, err)
		}
		if len(p.Messages) == 0 {
			break
		}
		for _, m := range p.Messages {
			seen[string(m.Payload)]++
			offset = m.Offset + 1
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for m := range l.acked {
		if seen[m] != 1 {
			t.Errorf("acknowledged %s stored %d times", m, seen[m])
		}
	}
	for m, n := range seen {
		switch {
		case l.acked[m]:
		case l.unknown[m]:
			if n > 1 {
				t.Errorf("%s (outcome unknown) stored %d times", m, n)
			}
		case l.notApplied[m]:
			t.Errorf("%s was reported not applied but is stored", m)
		default:
			t.Errorf("%s stored but never sent", m)
		}
	}
	t.Logf("%d acknowledged, %d of unknown outcome (%d stored), %d not applied", len(l.acked), len(l.unknown),
		len(seen)-len(l.acked), len(l.notApplied))
}

func TestClusterWritesResumeAfterThePrimaryDies(t *testing.T) {
	c := clustertest.Start(t, 2*time.Second)
	c.RequireFaults(t)
	old := currentPrimary(t, c)
	obs := &moves{}
	cl := dialCluster(t, c, c.Seeds(c.Others(old)[0], old, c.Others(old)[1]), obs)
	stream, topic := unique("failover"), "t"
	if _, err := cl.CreateStream(testCtx(t), stream); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateTopic(testCtx(t), Name(stream), topic, 1, TopicOptions{}); err != nil {
		t.Fatal(err)
	}

	l := &sendLog{acked: map[string]bool{}, unknown: map[string]bool{}, notApplied: map[string]bool{}}
	var killedMu sync.Mutex
	var killed time.Time
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				killedMu.Lock()
				k := killed
				killedMu.Unlock()
				payload := fmt.Sprintf("w%d-%d", w, n)
				ctx, cancel := context.WithTimeout(context.Background(), 2*failoverBudget)
				_, err := cl.SendMessages(ctx, Name(stream), Name(topic), 0, []Message{{Payload: []byte(payload)}})
				cancel()
				l.record(t, payload, err, k)
			}
		})
	}
	waitFor(t, "writes before the kill", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.acked) >= 50 })
	// The clock starts once the node is dead: a real node is killed by a command that takes a
	// while, and writes acknowledged before it ends do not show a resumption.
	c.Kill(t, old)
	killedMu.Lock()
	killed = time.Now()
	killedMu.Unlock()
	t.Cleanup(func() { c.Restart(t, old) })
	waitFor(t, "a write acknowledged after the kill", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return !l.firstAckAfterKill.IsZero() })
	l.mu.Lock()
	resumed := l.firstAckAfterKill.Sub(killed)
	l.mu.Unlock()
	time.Sleep(200 * time.Millisecond) // a few more writes on the new primary
	close(stop)
	wg.Wait()

	t.Logf("writes resumed %v after the primary died", resumed)
	if resumed > failoverBudget {
		t.Errorf("writes resumed %v after the primary died, over %v", resumed, failoverBudget)
	}
	now := c.Index(cl.Primary())
	if now < 0 || now == old {
		t.Fatalf("the client's primary is %q (node %d) after node %d died", cl.Primary(), now, old)
	}
	if cl.Failovers() != 1 {
		t.Errorf("Failovers = %d, want 1", cl.Failovers())
	}
	if m := obs.list(); len(m) == 0 || c.Index(m[len(m)-1].from) != old || c.Index(m[len(m)-1].to) != now ||
		m[len(m)-1].resume <= 0 || m[len(m)-1].resume > failoverBudget {
		t.Errorf("PrimaryChanged events %+v, want a move from node %d to node %d with a resume time within %v", m, old, now, failoverBudget)
	}
	for i, cn := range cl.conns {
		if a := cn.Addr(); a != "" && c.Index(a) != now {
			t.Errorf("pool connection %d is on %s, not on the new primary (node %d)", i, a, now)
		}
	}
	checkExactlyOnce(t, cl, stream, topic, l)
	// Administration follows too.
	if _, err := cl.CreateTopic(testCtx(t), Name(stream), "after", 1, TopicOptions{}); err != nil {
		t.Fatalf("CreateTopic after the failover: %v", err)
	}
}

func TestClusterOldPrimaryRejoinsAsABackup(t *testing.T) {
	c := clustertest.Start(t, time.Second)
	c.RequireFaults(t)
	old := currentPrimary(t, c)
	cl := dialCluster(t, c, c.Seeds(0, 1, 2), nil)
	stream := unique("rejoin")
	if _, err := cl.CreateStream(testCtx(t), stream); err != nil {
		t.Fatal(err)
	}
	c.Kill(t, old)
	if _, err := cl.CreateTopic(testCtx(t), Name(stream), "t", 1, TopicOptions{}); err != nil {
		t.Fatalf("CreateTopic across the failover: %v", err)
	}
	now := c.Index(cl.Primary())
	c.Restart(t, old)

	var md *ClusterMetadata
	waitFor(t, "the restarted node to name the new primary", func() bool {
		md = rosterOf(t, c, old)
		for _, n := range md.Nodes {
			if n.Role == wire.NodeRoleLeader {
				return c.Index(nodeAddr(n)) == now
			}
		}
		return false
	})
	// A client listing the restarted node first still reaches the new primary, and so does the
	// client that lived through the failover.
	late := dialCluster(t, c, c.Seeds(old, c.Others(old)[0], c.Others(old)[1]), nil)
	waitFor(t, "the late client to reach the primary", func() bool { return c.Index(late.Primary()) == now })
	for name, api := range map[string]*Client{"late client": late, "old client": cl} {
		if _, err := api.SendMessages(testCtx(t), Name(stream), Name("t"), 0, []Message{{Payload: []byte(name)}}); err != nil {
			t.Errorf("%s: send after the old primary rejoined: %v", name, err)
		}
	}
	if c.Index(cl.Primary()) != now || cl.Failovers() != 1 {
		t.Errorf("old client: primary %s, %d failovers; want node %d, 1", cl.Primary(), cl.Failovers(), now)
	}
}

// A view change that leaves the old primary alive fails no request of an idle client: the
// roster read every RosterInterval names the new leader, and the client moves.
func TestClusterFollowsARosterChange(t *testing.T) {
	c := clustertest.Start(t, time.Hour)
	if c.Real() {
		t.Skip("a view change without a death cannot be caused from a test on a real cluster")
	}
	obs := &moves{}
	cfg := clusterConfig(c, c.Seeds(0, 1, 2))
	cfg.Observer, cfg.RosterInterval = obs, 100*time.Millisecond
	cl, err := Dial(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if c.Index(cl.Primary()) != 0 {
		t.Fatalf("primary %s, want node 0", cl.Primary())
	}
	now := c.Mem.ChangeView()
	waitFor(t, "the client to follow the roster", func() bool { return c.Index(cl.Primary()) == now })
	if _, err := cl.CreateStream(testCtx(t), unique("moved")); err != nil {
		t.Fatalf("CreateStream after the move: %v", err)
	}
	m := obs.list()
	if cl.Failovers() != 1 || len(m) == 0 || m[len(m)-1].resume != 0 {
		t.Errorf("Failovers %d, moves %+v: want one failover without a time without primary", cl.Failovers(), m)
	}
}

// A connection acquired for its own session (consumer-group membership) follows the primary
// too: after the failover it works on the new primary, as a new session.
func TestClusterAcquiredConnectionFollows(t *testing.T) {
	c := clustertest.Start(t, 500*time.Millisecond)
	c.RequireFaults(t)
	cl := dialCluster(t, c, c.Seeds(0, 1, 2), nil)
	old := c.Index(cl.Primary())
	cn, release, err := cl.Acquire(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	before := cn.Session()
	c.Kill(t, old)
	t.Cleanup(func() { c.Restart(t, old) })
	if _, err := cn.CreateStream(testCtx(t), unique("acquired")); err != nil {
		t.Fatalf("CreateStream on the acquired connection after the failover: %v", err)
	}
	if now := c.Index(cn.Addr()); now < 0 || now == old || cn.Session() == before {
		t.Errorf("acquired connection on node %d, session %d (was %d on node %d)", now, cn.Session(), before, old)
	}
}

// A cluster that stays without a primary longer than FailoverTimeout fails requests with a
// connection error (retriable, and for a send not "maybe applied": it was never sent) instead
// of holding them.
func TestClusterLeaderlessLongerThanTheBudgetFails(t *testing.T) {
	c := clustertest.Start(t, time.Hour)
	if c.Real() {
		t.Skip("a real cluster elects a new primary within its own timeouts")
	}
	cfg := clusterConfig(c, c.Seeds(0, 1, 2))
	cfg.FailoverTimeout = 500 * time.Millisecond
	cl, err := Dial(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	stream := unique("leaderless")
	if _, err := cl.CreateStream(testCtx(t), stream); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateTopic(testCtx(t), Name(stream), "t", 1, TopicOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Mem.KillPrimary()
	start := time.Now()
	_, err = cl.SendMessages(testCtx(t), Name(stream), Name("t"), 0, []Message{{Payload: []byte("x")}})
	took := time.Since(start)
	if !errors.Is(err, ErrConnection) || MaybeApplied(err) {
		t.Fatalf("send without a primary: %v; want a connection error that was not applied", err)
	}
	if took > 5*time.Second {
		t.Errorf("the send took %v to fail with a 500 ms failover budget", took)
	}
	// With every node dead the search ends the call once, after one budget, not once per
	// session retry.
	for i := range c.Addrs {
		c.Mem.Kill(i)
	}
	start = time.Now()
	_, err = cl.GetStreams(testCtx(t))
	took = time.Since(start)
	if !errors.Is(err, ErrConnection) || !errors.Is(err, errNoPrimary) {
		t.Fatalf("read with every node dead: %v; want a connection error saying no primary was found", err)
	}
	if took > 1800*time.Millisecond {
		t.Errorf("the read took %v to fail with a 500 ms failover budget", took)
	}
}

// A login check (VerifyLogin, SASL) is answered by the first seed that answers: any node of a
// cluster checks a login, and a dead seed is skipped.
func TestClusterVerifyLoginSkipsADeadSeed(t *testing.T) {
	c := clustertest.Start(t, time.Second)
	c.RequireFaults(t)
	p := currentPrimary(t, c)
	dead := c.Others(p)[0]
	c.Kill(t, dead)
	t.Cleanup(func() { c.Restart(t, dead) })
	cfg := clusterConfig(c, c.Seeds(dead, c.Others(p)[1], p))
	u, err := VerifyLogin(testCtx(t), cfg, c.Username, c.Password)
	if err != nil || u.Username != c.Username {
		t.Fatalf("VerifyLogin with a dead seed first: %+v, %v", u, err)
	}
	if _, err := VerifyLogin(testCtx(t), cfg, c.Username, "not-the-password"); !IsCode(err, CodeInvalidCredentials) {
		t.Fatalf("VerifyLogin with a wrong password: %v, want error 42", err)
	}
}

// Every partition of a real Iggy 0.9 cluster is a consensus group of its own, whose primary is
// not always the roster's leader (a partition created after a failover starts in view 0; a
// partition's view change can elect another node than the metadata group's). Partition writes
// the leader refuses with 58 go to the node that admits them; administration and reads stay on
// the leader, and the client does not count a failover.
func TestClusterPartitionPrimaryIsNotTheLeader(t *testing.T) {
	c := clustertest.Start(t, time.Second)
	if c.Real() {
		t.Skip("a partition primary apart from the metadata primary cannot be arranged from a test on a real cluster")
	}
	cl := dialCluster(t, c, c.Seeds(0, 1, 2), nil)
	stream := unique("partprimary")
	if _, err := cl.CreateStream(testCtx(t), stream); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateTopic(testCtx(t), Name(stream), "t", 1, TopicOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Mem.SetPartitionPrimary(2)
	part := uint32(0)
	for i := range 5 {
		if _, err := cl.SendMessages(testCtx(t), Name(stream), Name("t"), 0, []Message{{Payload: fmt.Appendf(nil, "m%d", i)}}); err != nil {
			t.Fatalf("send %d with the partition primary on node 2: %v", i, err)
		}
	}
	if err := cl.StoreConsumerOffset(testCtx(t), Consumer{Kind: 1, ID: ID(7)}, Name(stream), Name("t"), &part, 3); err != nil {
		t.Fatalf("StoreConsumerOffset with the partition primary on node 2: %v", err)
	}
	if _, err := cl.CreateTopic(testCtx(t), Name(stream), "u", 1, TopicOptions{}); err != nil {
		t.Fatalf("CreateTopic (metadata, on the leader): %v", err)
	}
	if p := c.Index(cl.Primary()); p != 0 || cl.Failovers() != 0 {
		t.Errorf("primary node %d, %d failovers; want node 0 (the roster's leader), none", p, cl.Failovers())
	}
	l := &sendLog{acked: map[string]bool{"m0": true, "m1": true, "m2": true, "m3": true, "m4": true}, unknown: map[string]bool{}, notApplied: map[string]bool{}}
	checkExactlyOnce(t, cl, stream, "t", l)
	// Back on the leader, partition writes go there again.
	c.Mem.SetPartitionPrimary(-1)
	if _, err := cl.SendMessages(testCtx(t), Name(stream), Name("t"), 0, []Message{{Payload: []byte("back")}}); err != nil {
		t.Fatalf("send with partitions back on the leader: %v", err)
	}
}
