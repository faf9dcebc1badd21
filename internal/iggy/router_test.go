package iggy

import (
	"slices"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

func TestSameAddr(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"127.0.0.1:8090", "127.0.0.1:8090", true},
		{"localhost:8090", "127.0.0.1:8090", true},
		{"Iggy-0.Example:8090", "iggy-0.example:8090", true},
		{"[2001:DB8::1]:8090", "[2001:db8::1]:8090", true},
		{"[::ffff:10.0.0.1]:8090", "10.0.0.1:8090", true},
		{"127.0.0.1:8090", "127.0.0.1:8091", false},
		{"10.0.0.1:8090", "10.0.0.2:8090", false},
	}
	for _, tt := range tests {
		if got := sameAddr(tt.a, tt.b); got != tt.want {
			t.Errorf("sameAddr(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestHealthyLeader(t *testing.T) {
	node := func(ip string, port uint16, role, status uint8) ClusterNode {
		return ClusterNode{Name: ip, IP: ip, TCPPort: port, Role: role, Status: status}
	}
	tests := []struct {
		name  string
		nodes []ClusterNode
		want  string
	}{
		{"leader among followers", []ClusterNode{
			node("10.0.0.1", 8090, wire.NodeRoleFollower, wire.NodeStatusHealthy),
			node("10.0.0.2", 8091, wire.NodeRoleLeader, wire.NodeStatusHealthy),
			node("10.0.0.3", 8092, wire.NodeRoleFollower, wire.NodeStatusHealthy)}, "10.0.0.2:8091"},
		{"ipv6 leader", []ClusterNode{node("2001:db8::1", 8090, wire.NodeRoleLeader, wire.NodeStatusHealthy)}, "[2001:db8::1]:8090"},
		{"leader not healthy", []ClusterNode{node("10.0.0.1", 8090, wire.NodeRoleLeader, wire.NodeStatusStopping)}, ""},
		{"leader without tcp", []ClusterNode{node("10.0.0.1", 0, wire.NodeRoleLeader, wire.NodeStatusHealthy)}, ""},
		{"no leader (mid-election)", []ClusterNode{
			node("10.0.0.1", 8090, wire.NodeRoleFollower, wire.NodeStatusHealthy),
			node("10.0.0.2", 8090, wire.NodeRoleFollower, wire.NodeStatusHealthy)}, ""},
	}
	for _, tt := range tests {
		got, ok := healthyLeader(&ClusterMetadata{Name: "c", Nodes: tt.nodes})
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: healthyLeader = %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}

func TestDedupAddrs(t *testing.T) {
	got := dedupAddrs([]string{"", "localhost:1", "a:2", "127.0.0.1:1", "A:2", "b:3", ""})
	if want := []string{"localhost:1", "a:2", "b:3"}; !slices.Equal(got, want) {
		t.Errorf("dedupAddrs = %q, want %q", got, want)
	}
}
