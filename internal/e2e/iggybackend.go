package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/clustertest"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// iggyBackend is the Iggy server the harness's gateways bridge to: the in-memory server
// started in-process, or a real server named by IGGY_TEST_ADDR; or an Iggy cluster of three
// nodes (startIggyClusterBackend), whose seed list is target.addr.
type iggyBackend struct {
	target  iggyTarget
	server  *memserver.Server    // nil for a real server or a cluster
	cluster *clustertest.Cluster // nil for a single server

	mu     sync.Mutex
	client *iggy.Client // dialed on first use
}

func startIggyBackend() (*iggyBackend, error) {
	if addr := os.Getenv("IGGY_TEST_ADDR"); addr != "" {
		user, pass := os.Getenv("IGGY_TEST_USERNAME"), os.Getenv("IGGY_TEST_PASSWORD")
		if user == "" || pass == "" {
			return nil, errors.New("IGGY_TEST_ADDR is set: IGGY_TEST_USERNAME and IGGY_TEST_PASSWORD are required too")
		}
		return &iggyBackend{target: iggyTarget{addr: addr, username: user, password: pass}}, nil
	}
	return startMemIggy("127.0.0.1:0")
}

// startMemIggy starts the in-memory Iggy server on addr ("127.0.0.1:0" for a free port).
func startMemIggy(addr string) (*iggyBackend, error) {
	const user, pass = "iggy", "iggy"
	srv, err := memserver.Start(memserver.Config{Addr: addr, RootUsername: user, RootPassword: pass})
	if err != nil {
		return nil, fmt.Errorf("start in-memory Iggy server: %w", err)
	}
	return &iggyBackend{target: iggyTarget{addr: srv.Addr(), username: user, password: pass}, server: srv}, nil
}

func (b *iggyBackend) describe() string {
	if b.cluster != nil {
		return clusterKind(b.cluster.Real()) + " at " + strings.Join(b.cluster.Addrs, ",") + ", the gateway's seed list " + b.target.addr
	}
	if b.server != nil {
		return "in-memory Iggy server at " + b.target.addr
	}
	return "real Iggy server at " + b.target.addr + " (IGGY_TEST_ADDR)"
}

// iggyClient returns the harness's own Iggy connection, dialing it on first use.
func (b *iggyBackend) iggyClient(ctx context.Context) (*iggy.Client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client != nil {
		return b.client, nil
	}
	c, err := iggy.Dial(ctx, iggy.Config{Addr: b.target.addr, Username: b.target.username, Password: b.target.password})
	if err != nil {
		return nil, fmt.Errorf("dial Iggy at %s: %w", b.target.addr, err)
	}
	b.client = c
	return c, nil
}

// createTopic creates stream/name natively in Iggy, creating the stream first if needed.
func (b *iggyBackend) createTopic(ctx context.Context, name string, partitions int) error {
	c, err := b.iggyClient(ctx)
	if err != nil {
		return err
	}
	if _, err := iggy.EnsureStream(ctx, c, kafkaStream); err != nil {
		return err
	}
	_, err = c.CreateTopic(ctx, iggy.Name(kafkaStream), name, uint32(partitions), iggy.TopicOptions{})
	return err
}

// leaveNothing deletes what a test created on a real Iggy server when the test ends (del
// names it), so that repeated runs against one server do not pile up topics and users; the
// in-memory server goes away with the run. Failures are logged, not fatal: the test's
// verdict is already made.
func (b *iggyBackend) leaveNothing(t testing.TB, what string, del func(context.Context, *iggy.Client) error) {
	if b.server != nil || b.inMemoryCluster() {
		return
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := b.iggyClient(ctx)
		if err == nil {
			err = del(ctx, c)
		}
		if err != nil {
			t.Logf("cleanup: deleting %s from the Iggy server: %v", what, err)
		}
	})
}

// inMemoryCluster reports whether the backend is the in-memory Iggy cluster.
func (b *iggyBackend) inMemoryCluster() bool { return b.cluster != nil && !b.cluster.Real() }

// startIggyClusterBackend starts the Iggy cluster of t (package clustertest: the in-memory
// three-node cluster electing a new primary electionDelay after the primary dies, or the real
// cluster of IGGY_TEST_CLUSTER_ADDRS). The gateway's seed list names every node, a backup first
// (docs/DEPLOYMENT.md §7): the gateway must find the primary through the roster, not by luck
// of the order. The cluster is closed when t ends; close the backend too.
func startIggyClusterBackend(t testing.TB, electionDelay time.Duration) *iggyBackend {
	t.Helper()
	c := clustertest.Start(t, electionDelay)
	b := &iggyBackend{cluster: c, target: iggyTarget{addr: c.Seeds(0, 1, 2), username: c.Username, password: c.Password}}
	p := b.primary(t)
	backups := c.Others(p)
	b.target.addr = c.Seeds(backups[0], p, backups[1])
	return b
}

// clusterKind says which kind of Iggy cluster a backend is, for logs and the report.
func clusterKind(real bool) string {
	if real {
		return "real Iggy cluster (IGGY_TEST_CLUSTER_ADDRS)"
	}
	return "in-memory Iggy cluster"
}

// primary is the node of the backend's cluster that is primary now, as a client given every
// node finds it (through the roster the nodes report).
func (b *iggyBackend) primary(t testing.TB) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := b.cluster
	cl, err := iggy.Dial(ctx, iggy.Config{Addr: c.Seeds(0, 1, 2), Username: c.Username, Password: c.Password, PoolSize: 1, PingInterval: -1})
	if err != nil {
		t.Fatalf("find the Iggy primary of %s: %v", strings.Join(c.Addrs, ","), err)
	}
	defer cl.Close()
	p := c.Index(cl.Primary())
	if p < 0 {
		t.Fatalf("the Iggy primary %q is none of %v", cl.Primary(), c.Addrs)
	}
	return p
}

func (b *iggyBackend) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client != nil {
		b.client.Close()
		b.client = nil
	}
	if b.server != nil {
		done := make(chan struct{})
		go func() { b.server.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			fmt.Println("e2e: in-memory Iggy server did not close within 10 s")
		}
	}
}
