package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
)

// gatewayCluster is several gateway processes over one Iggy backend, each with the same
// BROKERS list and its own NODE_ID (docs/DEPLOYMENT.md). Node i+1 listens on addrs[i] for the
// whole test, so a killed gateway restarts at the address the others advertise for it.
type gatewayCluster struct {
	// env bootstraps clients with every gateway; its Kgo, Admin and CreateTopic work on the
	// cluster.
	env      *Env
	backend  *iggyBackend
	bin      string
	addrs    []string
	extraEnv []string
	nodes    []*childproc.Gateway // the running (or last) process of each node
	previous []*childproc.Gateway // processes killed before, whose output a failure prints
}

// startGatewayCluster starts n gateways (node ids 1..n) with extraEnv (IGGY_KAFKA_* settings)
// on an Iggy backend of their own: a fresh in-memory server, or the real server of
// IGGY_TEST_ADDR. Everything is stopped when t ends.
func startGatewayCluster(t *testing.T, n int, extraEnv ...string) *gatewayCluster {
	t.Helper()
	if sharedEnv(t).External() {
		t.Skip("needs gateways started by the harness (IGGYGW_E2E_BOOTSTRAP is set)")
	}
	backend, err := startIggyBackend()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(backend.close)
	return startGatewayClusterOn(t, backend, n, extraEnv...)
}

// startGatewayClusterOn starts n gateways (node ids 1..n) with extraEnv bridged to backend,
// which the caller closes. Everything else is stopped when t ends.
func startGatewayClusterOn(t *testing.T, backend *iggyBackend, n int, extraEnv ...string) *gatewayCluster {
	t.Helper()
	bin, err := buildGateway()
	if err != nil {
		t.Fatal(err)
	}
	c := &gatewayCluster{backend: backend, bin: bin, extraEnv: extraEnv, nodes: make([]*childproc.Gateway, n)}
	for range n {
		a, err := childproc.FreeLoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		c.addrs = append(c.addrs, a)
	}
	c.env = &Env{Bootstrap: strings.Join(c.addrs, ","), iggy: backend}
	t.Cleanup(func() { c.stopAll(t) })
	for i := range n {
		c.spawn(t, i)
	}
	for i := range n {
		c.waitReady(t, i)
	}
	return c
}

// nodeID is the node id of the gateway at index i.
func (c *gatewayCluster) nodeID(i int) int32 { return int32(i + 1) }

// index is the index of node id.
func (c *gatewayCluster) index(id int32) int { return int(id) - 1 }

// brokers is the BROKERS setting every gateway gets.
func (c *gatewayCluster) brokers() string {
	var b []string
	for i, a := range c.addrs {
		b = append(b, fmt.Sprintf("%d@%s", c.nodeID(i), a))
	}
	return strings.Join(b, ",")
}

// spawn starts node i's process without waiting for it to serve.
func (c *gatewayCluster) spawn(t *testing.T, i int) {
	t.Helper()
	env := append([]string{"IGGY_KAFKA_BROKERS=" + c.brokers(), fmt.Sprintf("IGGY_KAFKA_NODE_ID=%d", c.nodeID(i))}, c.extraEnv...)
	g, err := childproc.SpawnGateway(c.bin, c.addrs[i], gatewayConfig(c.backend.target, env))
	if err != nil {
		t.Fatal(err)
	}
	c.nodes[i] = g
}

func (c *gatewayCluster) waitReady(t *testing.T, i int) {
	t.Helper()
	if _, err := waitReady(c.nodes[i], 60*time.Second); err != nil {
		t.Fatalf("gateway %d: %v\n%s", c.nodeID(i), err, indent(c.nodes[i].Output.String()))
	}
}

// start starts node i again after it was killed, at its address, and waits until it serves.
func (c *gatewayCluster) start(t *testing.T, i int) {
	t.Helper()
	c.spawn(t, i)
	c.waitReady(t, i)
}

// running reports whether node i's process is up.
func (c *gatewayCluster) running(i int) bool {
	dead, _ := c.nodes[i].Exited()
	return !dead
}

// kill ends node i with SIGKILL, as a crash or the OOM killer would, and returns when it died.
func (c *gatewayCluster) kill(t *testing.T, i int) time.Time {
	t.Helper()
	g := c.nodes[i]
	if err := g.Kill(); err != nil {
		t.Fatalf("SIGKILL gateway %d: %v", c.nodeID(i), err)
	}
	c.previous = append(c.previous, g)
	return time.Now()
}

// stopAll stops the running gateways gracefully and fails t if one exited on its own (a
// crash), exited badly, or reported a data race; on failure it prints every gateway's output.
func (c *gatewayCluster) stopAll(t *testing.T) {
	for i, g := range c.nodes {
		if g == nil {
			continue
		}
		if dead, err := g.Exited(); dead && !c.wasKilled(g) {
			t.Errorf("gateway %d exited during the test: %v", c.nodeID(i), err)
		} else if !dead {
			if err := g.Stop(); err != nil {
				t.Errorf("gateway %d exited with %v", c.nodeID(i), err)
			}
		}
	}
	for _, g := range append(c.previous, c.nodes...) {
		if g == nil {
			continue
		}
		if races := raceReports(g.Output); races != "" {
			t.Errorf("data race in a gateway:\n%s", races)
		}
	}
	if t.Failed() {
		for _, g := range append(c.previous, c.nodes...) {
			if g != nil {
				out := g.Output.String()
				t.Logf("output of the gateway at %s (pid %d), the last 64 KiB:\n%s", g.Addr, g.PID(), indent(out[max(0, len(out)-64<<10):]))
			}
		}
	}
}

func (c *gatewayCluster) wasKilled(g *childproc.Gateway) bool {
	for _, p := range c.previous {
		if p == g {
			return true
		}
	}
	return false
}
