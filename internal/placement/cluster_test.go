package placement

import (
	"fmt"
	"slices"
	"testing"
)

func testCluster(fixed bool, ids ...int32) *Cluster {
	var nodes []Node
	for _, id := range ids {
		nodes = append(nodes, Node{ID: id, Host: fmt.Sprintf("gw%d", id), Port: 9093})
	}
	return NewCluster(ClusterConfig{Nodes: nodes, Fixed: fixed, PartitionOf: func(g string) int { return len(g) % 16 }})
}

// answers is everything a Cluster says, for comparing two gateways' views.
func answers(c *Cluster) string {
	out := fmt.Sprint(c.Brokers("PLAINTEXT"), c.Controller())
	for p := range int32(64) {
		out += fmt.Sprint(c.Leader("orders", p), c.Leader("payments", p))
	}
	for k := range 16 {
		out += fmt.Sprint(c.Owner(k))
	}
	for _, g := range []string{"", "a", "bb", "group-17"} {
		out += fmt.Sprint(c.Coordinator("PLAINTEXT", g))
	}
	return out
}

func TestClusterSameMembershipSameAnswers(t *testing.T) {
	a, b := testCluster(false, 1, 2, 3, 4), testCluster(false, 4, 3, 2, 1)
	a.SetLive([]int32{3, 1, 2})
	b.SetLive([]int32{2, 3, 1, 1, 9}) // order, duplicates and unknown ids do not matter
	if answers(a) != answers(b) {
		t.Fatalf("same membership, different answers:\n%s\n%s", answers(a), answers(b))
	}
	if got := a.Live(); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Errorf("Live = %v", got)
	}
	if got := a.Brokers("PLAINTEXT"); len(got) != 3 || got[0] != (Node{1, "gw1", 9093}) {
		t.Errorf("Brokers = %v", got)
	}
}

func TestClusterSpreadsAndMovesOnlyTheLeaversKeys(t *testing.T) {
	c := testCluster(false, 1, 2, 3)
	const parts = 300
	before := make([]int32, parts)
	count := map[int32]int{}
	for p := range int32(parts) {
		before[p] = c.Leader("t", p)
		count[before[p]]++
	}
	for _, id := range []int32{1, 2, 3} {
		if count[id] < parts/6 { // a fair share is parts/3
			t.Errorf("node %d leads %d of %d partitions", id, count[id], parts)
		}
	}
	owners := map[int32]bool{}
	for k := range 16 {
		owners[c.Owner(k)] = true
	}
	if len(owners) != 3 {
		t.Errorf("coordinator-log partitions are owned by %v only", owners)
	}
	c.SetLive([]int32{1, 3}) // node 2 dies
	for p := range int32(parts) {
		now := c.Leader("t", p)
		if before[p] != 2 && now != before[p] || now == 2 {
			t.Fatalf("partition %d moved from %d to %d", p, before[p], now)
		}
	}
	c.SetLive([]int32{1, 2, 3}) // and comes back: everything is where it was
	for p := range int32(parts) {
		if got := c.Leader("t", p); got != before[p] {
			t.Fatalf("partition %d led by %d after rejoin, was %d", p, got, before[p])
		}
	}
}

func TestClusterControllerAndCoordinator(t *testing.T) {
	c := testCluster(false, 1, 2, 3)
	if c.Controller() != c.Owner(0) {
		t.Errorf("controller %d, owner of partition 0 %d", c.Controller(), c.Owner(0))
	}
	if got := c.Coordinator("PLAINTEXT", "bb"); got.ID != c.Owner(2) || got.Host != fmt.Sprintf("gw%d", got.ID) {
		t.Errorf("coordinator of bb (partition 2) = %v, owner %d", got, c.Owner(2))
	}
	c.SetLive(nil)
	if c.Controller() != -1 || c.Leader("t", 0) != -1 || c.Coordinator("PLAINTEXT", "g").ID != -1 {
		t.Errorf("nobody live: controller %d leader %d", c.Controller(), c.Leader("t", 0))
	}
	if got := c.Brokers("PLAINTEXT"); len(got) != 3 {
		t.Errorf("nobody live: Brokers = %v, want every configured node", got)
	}
}

func TestClusterFixedCoordinatorIsTheLowestID(t *testing.T) {
	c := testCluster(true, 5, 2, 7)
	c.SetLive([]int32{5, 7})
	if c.Controller() != 2 || c.Coordinator("PLAINTEXT", "g").ID != 2 || c.Owner(9) != 2 {
		t.Errorf("fixed: controller %d, want 2 even while it is down", c.Controller())
	}
	if l := c.Leader("t", 0); l != 5 && l != 7 {
		t.Errorf("leader %d is not live", l)
	}
}

// The generation moves with every change of the live membership, and only then; a Single
// placement never changes.
func TestGenerationMovesWithTheMembership(t *testing.T) {
	c := testCluster(false, 1, 2, 3)
	start := Generation(c)
	c.SetLive([]int32{3, 2, 1, 2})
	if got := Generation(c); got != start {
		t.Errorf("same membership in another order: generation %d → %d", start, got)
	}
	c.SetLive([]int32{1, 2})
	c.SetLive([]int32{1, 2, 3})
	if got := Generation(c); got != start+2 {
		t.Errorf("a gateway left and came back: generation %d → %d, want +2", start, got)
	}
	if got := Generation(Single{NodeID: 1}); got != 0 {
		t.Errorf("Single: generation %d", got)
	}
}
