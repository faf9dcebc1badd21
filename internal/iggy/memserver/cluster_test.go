package memserver

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

func startCluster(t *testing.T, delay time.Duration) *Cluster {
	t.Helper()
	c, err := StartCluster(ClusterConfig{ElectionDelay: delay})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func connectNode(t *testing.T, c *Cluster, i int) *rawClient {
	t.Helper()
	return connect(t, c.Node(i))
}

// checkRoster asserts that node i reports every node with its TCP port, leader as the only
// Leader, and every node Healthy (as the real roster does, dead or not).
func checkRoster(t *testing.T, c *Cluster, i, leader int) {
	t.Helper()
	checkRosterOn(t, connectNode(t, c, i), c, i, leader)
}

// checkRosterOn is checkRoster on an open session with node i.
func checkRosterOn(t *testing.T, rc *rawClient, c *Cluster, i, leader int) {
	t.Helper()
	md, err := wire.DecodeClusterMetadata(rc.ok(wire.CodeGetClusterMetadata, nil))
	if err != nil {
		t.Fatal(err)
	}
	if md.Name != "iggy-memserver-cluster" || len(md.Nodes) != 3 {
		t.Fatalf("node %d: roster %+v", i, md)
	}
	for j, n := range md.Nodes {
		host, port, _ := net.SplitHostPort(c.Node(j).Addr())
		wantRole := wire.NodeRoleFollower
		if j == leader {
			wantRole = wire.NodeRoleLeader
		}
		if n.IP != host || strconv.Itoa(int(n.TCPPort)) != port || n.Role != wantRole || n.Status != wire.NodeStatusHealthy ||
			n.QUICPort != 0 || n.HTTPPort != 0 || n.WSPort != 0 {
			t.Errorf("node %d reports node %d as %+v, want %s role %d healthy", i, j, n, c.Node(j).Addr(), wantRole)
		}
	}
}

// rejectedNotAccepted asserts the reply a backup gives a write: TransientNotAccepted (58), as
// status for a partition write and in the result section for a metadata write.
func rejectedNotAccepted(t *testing.T, f frame, resultFramed bool) {
	t.Helper()
	if !resultFramed {
		if f.reply.Status != codeTransientNotAccepted || len(f.body) != 0 {
			t.Fatalf("status %d body %d bytes, want status 58 and no body", f.reply.Status, len(f.body))
		}
		return
	}
	_, rc, err := wire.ParseResult(f.body)
	if f.reply.Status != 0 || err != nil || rc != codeTransientNotAccepted {
		t.Fatalf("status %d result %d (%v), want status 0 and result 58", f.reply.Status, rc, err)
	}
}

func TestClusterBackupsServeReadsAndRefuseWrites(t *testing.T) {
	c := startCluster(t, time.Second)
	primary := connectNode(t, c, 0)
	primary.ok(wire.CodeCreateStream, wire.AppendCreateStream(nil, "s"))
	primary.ok(wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: wire.Identifier{Name: "s"}, PartitionsCount: 1, Name: "t"}))
	primary.ok(wire.CodeSendMessages, sendBody(t, "s", "t", 0, "a", "b"))
	for i := range 3 {
		checkRoster(t, c, i, 0)
	}

	backup := connectNode(t, c, 2) // a login on a backup works while there is a primary
	streams, err := wire.DecodeStreams(backup.ok(wire.CodeGetStreams, nil))
	if err != nil || len(streams) != 1 || streams[0].Name != "s" || streams[0].MessagesCount != 2 {
		t.Fatalf("backup reads %+v (%v), want stream s with 2 messages", streams, err)
	}
	offset := wire.OffsetRequest{Consumer: wire.Consumer{Kind: 1, ID: wire.Identifier{Numeric: 1}}, Stream: wire.Identifier{Name: "s"}, Topic: wire.Identifier{Name: "t"}, Offset: 1}
	writes := []struct {
		name         string
		code         uint32
		body         []byte
		resultFramed bool
	}{
		{"create stream", wire.CodeCreateStream, wire.AppendCreateStream(nil, "other"), true},
		{"create topic", wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: wire.Identifier{Name: "s"}, PartitionsCount: 1, Name: "u"}), true},
		{"send messages", wire.CodeSendMessages, sendBody(t, "s", "t", 0, "c"), false},
		{"store consumer offset", wire.CodeStoreConsumerOffset, wire.AppendStoreConsumerOffset(nil, &offset), false},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			rejectedNotAccepted(t, backup.call(w.code, w.body), w.resultFramed)
		})
	}
	streams, _ = wire.DecodeStreams(primary.ok(wire.CodeGetStreams, nil))
	if len(streams) != 1 || streams[0].MessagesCount != 2 || streams[0].TopicsCount != 1 {
		t.Fatalf("a write refused by a backup changed the state: %+v", streams)
	}
}

func TestClusterKillElectRestart(t *testing.T) {
	const delay = 300 * time.Millisecond
	c := startCluster(t, delay)
	old := connectNode(t, c, 0)
	old.ok(wire.CodeCreateStream, wire.AppendCreateStream(nil, "s"))
	// Without a primary no login is admitted, so the roster is read on a session opened before.
	watcher := connectNode(t, c, 1)

	killed := time.Now()
	if p := c.KillPrimary(); p != 0 {
		t.Fatalf("KillPrimary = %d, want 0", p)
	}
	if _, ok := old.read(); ok {
		t.Fatal("a connection to the killed primary stayed open")
	}
	if nc, err := net.DialTimeout("tcp", c.Node(0).Addr(), time.Second); err == nil {
		nc.Close()
		t.Fatal("the killed node still accepts connections")
	}
	if c.Primary() != -1 {
		t.Fatalf("Primary = %d right after the kill, want -1 until the election", c.Primary())
	}
	// Leaderless: the survivors still name the dead node, and cannot admit a login.
	checkRosterOn(t, watcher, c, 1, 0)
	b := dialRaw(t, c.Node(2).Addr())
	b.write(wire.RequestHeader{Operation: wire.OpRegister}, loginBody("iggy", "iggy"))
	if f, ok := b.read(); !ok {
		t.Fatal("login during the election: connection closed")
	} else {
		rejectedNotAccepted(t, f, true)
	}

	if p := c.WaitPrimary(5 * time.Second); p != 1 {
		t.Fatalf("elected %d, want node 1 (view 1)", p)
	}
	if took := time.Since(killed); took < delay {
		t.Fatalf("elected after %v, before the election delay %v", took, delay)
	}
	for _, i := range []int{1, 2} {
		checkRoster(t, c, i, 1)
	}
	nw := connectNode(t, c, 1)
	nw.ok(wire.CodeCreateTopic, wire.AppendCreateTopic(nil, &wire.CreateTopicRequest{Stream: wire.Identifier{Name: "s"}, PartitionsCount: 1, Name: "t"}))
	nw.ok(wire.CodeSendMessages, sendBody(t, "s", "t", 0, "a"))

	if err := c.Restart(0); err != nil {
		t.Fatal(err)
	}
	checkRoster(t, c, 0, 1)
	back := connectNode(t, c, 0)
	rejectedNotAccepted(t, back.call(wire.CodeSendMessages, sendBody(t, "s", "t", 0, "b")), false)
	streams, err := wire.DecodeStreams(back.ok(wire.CodeGetStreams, nil))
	if err != nil || len(streams) != 1 || streams[0].MessagesCount != 1 {
		t.Fatalf("the restarted node reads %+v (%v), want the new primary's one message", streams, err)
	}
	if c.Primary() != 1 {
		t.Fatalf("Primary = %d after the restart, want 1", c.Primary())
	}
}

func TestClusterWithoutMajorityElectsNoPrimary(t *testing.T) {
	c := startCluster(t, 50*time.Millisecond)
	c.Kill(2)
	c.KillPrimary()
	if p := c.WaitPrimary(300 * time.Millisecond); p != -1 {
		t.Fatalf("one node of three elected itself (node %d)", p)
	}
	if err := c.Restart(2); err != nil {
		t.Fatal(err)
	}
	if p := c.WaitPrimary(5 * time.Second); p != 1 {
		t.Fatalf("after a majority is back: primary %d, want 1", p)
	}
}

func TestClusterChangeViewKeepsTheOldPrimaryAsABackup(t *testing.T) {
	c := startCluster(t, time.Hour) // no election but the one ChangeView runs
	old := connectNode(t, c, 0)
	if p := c.ChangeView(); p != 1 {
		t.Fatalf("ChangeView elected %d, want 1", p)
	}
	checkRosterOn(t, old, c, 0, 1) // the old primary's sessions live on
	rejectedNotAccepted(t, old.call(wire.CodeCreateStream, wire.AppendCreateStream(nil, "s")), true)
	connectNode(t, c, 1).ok(wire.CodeCreateStream, wire.AppendCreateStream(nil, "s"))
}
