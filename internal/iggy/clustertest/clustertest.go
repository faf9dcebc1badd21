// Package clustertest gives tests an Iggy cluster of three nodes: a real Iggy 0.9 cluster when
// IGGY_TEST_CLUSTER_ADDRS names its nodes' client addresses (comma-separated, node i first as
// its replica id i), otherwise the in-memory cluster of package memserver. The credentials of a
// real cluster come from IGGY_TEST_USERNAME and IGGY_TEST_PASSWORD (default iggy/iggy).
//
// Failover tests kill and restart nodes: the in-memory cluster does it itself; a real one needs
// IGGY_TEST_CLUSTER_KILL_COMMAND and IGGY_TEST_CLUSTER_RESTART_COMMAND, shell commands run with
// the node's index as their last argument (and in IGGY_TEST_CLUSTER_NODE), and such tests skip
// without them. The restart command must return once the node has rejoined the cluster (a real
// node answers logins with TransientNotAccepted until then), and at once for a node that runs.
package clustertest

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// Cluster is the cluster a test runs against.
type Cluster struct {
	Addrs              []string
	Username, Password string
	// Mem is the in-memory cluster, nil for a real one.
	Mem *memserver.Cluster

	killCmd, restartCmd string
}

// Start returns the cluster for t: the real one of IGGY_TEST_CLUSTER_ADDRS, or a fresh in-memory
// cluster that elects a new primary electionDelay after the primary dies, closed when t ends.
func Start(t testing.TB, electionDelay time.Duration) *Cluster {
	t.Helper()
	if v := os.Getenv("IGGY_TEST_CLUSTER_ADDRS"); v != "" {
		addrs := strings.Split(v, ",")
		for i := range addrs {
			addrs[i] = strings.TrimSpace(addrs[i])
		}
		if len(addrs) != 3 {
			t.Fatalf("IGGY_TEST_CLUSTER_ADDRS names %d nodes, want 3", len(addrs))
		}
		t.Logf("iggy cluster: real at %s", v)
		return &Cluster{
			Addrs: addrs, Username: envOr("IGGY_TEST_USERNAME", "iggy"), Password: envOr("IGGY_TEST_PASSWORD", "iggy"),
			killCmd: os.Getenv("IGGY_TEST_CLUSTER_KILL_COMMAND"), restartCmd: os.Getenv("IGGY_TEST_CLUSTER_RESTART_COMMAND"),
		}
	}
	mc, err := memserver.StartCluster(memserver.ClusterConfig{ElectionDelay: electionDelay})
	if err != nil {
		t.Fatalf("start memserver cluster: %v", err)
	}
	t.Cleanup(func() { mc.Close() })
	t.Logf("iggy cluster: memserver at %s", strings.Join(mc.Addrs(), ","))
	return &Cluster{Addrs: mc.Addrs(), Username: "iggy", Password: "iggy", Mem: mc}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Real reports whether this is a real Iggy cluster.
func (c *Cluster) Real() bool { return c.Mem == nil }

// Seeds returns the addresses of the nodes in the given order, comma-separated.
func (c *Cluster) Seeds(order ...int) string {
	out := make([]string, len(order))
	for i, n := range order {
		out[i] = c.Addrs[n]
	}
	return strings.Join(out, ",")
}

// Index returns the node whose address is addr (compared as host and port), or -1.
func (c *Cluster) Index(addr string) int {
	h, p, _ := net.SplitHostPort(addr)
	for i, a := range c.Addrs {
		ah, ap, _ := net.SplitHostPort(a)
		if ap == p && (ah == h || sameHost(ah, h)) {
			return i
		}
	}
	return -1
}

func sameHost(a, b string) bool {
	norm := func(h string) string {
		if strings.EqualFold(h, "localhost") {
			return "127.0.0.1"
		}
		return strings.ToLower(h)
	}
	return norm(a) == norm(b)
}

// Others returns the nodes other than n, in order.
func (c *Cluster) Others(n int) []int {
	var out []int
	for i := range c.Addrs {
		if i != n {
			out = append(out, i)
		}
	}
	return out
}

// RequireFaults skips t when nodes of this cluster cannot be killed and restarted.
func (c *Cluster) RequireFaults(t testing.TB) {
	t.Helper()
	if c.Real() && (c.killCmd == "" || c.restartCmd == "") {
		t.Skip("a real cluster's nodes are killed and restarted with IGGY_TEST_CLUSTER_KILL_COMMAND and IGGY_TEST_CLUSTER_RESTART_COMMAND, which are not set")
	}
}

// Kill kills node i (SIGKILL for a real node). The node is started again when t ends, if the
// test did not restart it, so that a failed test does not leave the next one a cluster without
// a majority (the restart command returns at once for a node that runs).
func (c *Cluster) Kill(t testing.TB, i int) {
	t.Helper()
	if c.Mem != nil {
		c.Mem.Kill(i)
		return
	}
	c.run(t, "IGGY_TEST_CLUSTER_KILL_COMMAND", c.killCmd, i)
	t.Cleanup(func() { c.run(t, "IGGY_TEST_CLUSTER_RESTART_COMMAND", c.restartCmd, i) })
}

// Restart starts killed node i again; it rejoins the cluster as a backup.
func (c *Cluster) Restart(t testing.TB, i int) {
	t.Helper()
	if c.Mem != nil {
		if err := c.Mem.Restart(i); err != nil {
			t.Fatal(err)
		}
		return
	}
	c.run(t, "IGGY_TEST_CLUSTER_RESTART_COMMAND", c.restartCmd, i)
}

func (c *Cluster) run(t testing.TB, name, cmd string, i int) {
	t.Helper()
	c.RequireFaults(t)
	x := exec.Command("sh", "-c", cmd+" "+strconv.Itoa(i))
	x.Env = append(os.Environ(), "IGGY_TEST_CLUSTER_NODE="+strconv.Itoa(i))
	if out, err := x.CombinedOutput(); err != nil {
		t.Fatalf("%s for node %d: %v\n%s", name, i, err, out)
	}
}
