// Package placement says which gateway serves what: the leader of each partition, the
// coordinator of each consumer group, the controller, and the brokers clients may connect to.
// Kafka clients route every request by these answers (Metadata, FindCoordinator,
// DescribeCluster), so this is the one place where several gateways in front of one Iggy
// divide the work: Single when one gateway does everything, Cluster for several
// (docs/DEPLOYMENT.md).
package placement

// Node is a broker as Kafka clients see it: its id and the address it advertises on one
// listener.
type Node struct {
	ID   int32
	Host string
	Port int32
}

// Placement answers where partitions, groups and the controller are. Addresses depend on the
// listener a request arrived on (each advertises its own), so the answers that carry one take
// the listener's name.
type Placement interface {
	// Brokers lists every broker, as advertised on listener.
	Brokers(listener string) []Node
	// Leader is the id of the broker leading partition of a Kafka topic.
	Leader(topic string, partition int32) int32
	// Coordinator is the broker coordinating a consumer group, as advertised on listener.
	Coordinator(listener, group string) Node
	// Controller is the id of the broker clients send controller requests to.
	Controller() int32
}

// Generation returns a number that changes whenever p's answers may have changed (a gateway
// joined or left); a placement that never changes (Single) is always at generation 0. State
// that only the leader of a partition may keep (idempotent producers' sequences) is valid
// only within the generation it was built in: leadership may have moved away and back.
func Generation(p Placement) uint64 {
	if v, ok := p.(interface{ Generation() uint64 }); ok {
		return v.Generation()
	}
	return 0
}

// Single is the placement of one gateway: it leads every partition, coordinates every group
// and is the controller.
type Single struct {
	// NodeID is this gateway's broker id.
	NodeID int32
	// Advertised returns this gateway's address on a listener.
	Advertised func(listener string) (host string, port int32)
}

var _ Placement = Single{}

// Brokers is this gateway alone.
func (s Single) Brokers(listener string) []Node { return []Node{s.self(listener)} }

// Leader is this gateway.
func (s Single) Leader(string, int32) int32 { return s.NodeID }

// Coordinator is this gateway.
func (s Single) Coordinator(listener, _ string) Node { return s.self(listener) }

// Controller is this gateway.
func (s Single) Controller() int32 { return s.NodeID }

func (s Single) self(listener string) Node {
	host, port := s.Advertised(listener)
	return Node{ID: s.NodeID, Host: host, Port: port}
}
