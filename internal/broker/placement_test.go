package broker

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
)

// threeGateways places partitions round-robin over brokers 1-3, coordinates every group on 3
// and has 2 as the controller.
type threeGateways struct{}

func (threeGateways) Brokers(listener string) []placement.Node {
	out := make([]placement.Node, 3)
	for i := range out {
		out[i] = placement.Node{ID: int32(i + 1), Host: fmt.Sprintf("gw%d.%s", i+1, listener), Port: 9093}
	}
	return out
}
func (threeGateways) Leader(_ string, partition int32) int32 { return 1 + partition%3 }
func (g threeGateways) Coordinator(listener, _ string) placement.Node {
	return g.Brokers(listener)[2]
}
func (threeGateways) Controller() int32 { return 2 }

func TestHandlersAnswerWhatThePlacementSays(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, placement: threeGateways{}})
	g.mkTopic(g.config.DefaultStream, "placed", 3)
	c := dialRaw(t, g.addr)
	listener := g.config.Listeners[0].Name

	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Version = 12
	topic := "placed"
	mreq.Topics = []kmsg.MetadataRequestTopic{{Topic: &topic}}
	meta := c.roundTrip(mreq).(*kmsg.MetadataResponse)
	if meta.ControllerID != 2 {
		t.Errorf("Metadata controller %d, want 2", meta.ControllerID)
	}
	if len(meta.Brokers) != 3 || meta.Brokers[1].NodeID != 2 || meta.Brokers[1].Host != "gw2."+listener {
		t.Errorf("Metadata brokers %+v, want gw1-gw3", meta.Brokers)
	}
	if len(meta.Topics) != 1 || len(meta.Topics[0].Partitions) != 3 {
		t.Fatalf("Metadata topics %+v, want placed with 3 partitions", meta.Topics)
	}
	for _, p := range meta.Topics[0].Partitions {
		want := 1 + p.Partition%3
		if p.Leader != want || len(p.Replicas) != 1 || p.Replicas[0] != want || len(p.ISR) != 1 || p.ISR[0] != want {
			t.Errorf("partition %d: leader %d replicas %v isr %v, want %d", p.Partition, p.Leader, p.Replicas, p.ISR, want)
		}
	}

	freq := kmsg.NewPtrFindCoordinatorRequest()
	freq.Version = 4
	freq.CoordinatorKeys = []string{"g"}
	found := c.roundTrip(freq).(*kmsg.FindCoordinatorResponse)
	if len(found.Coordinators) != 1 || found.Coordinators[0].NodeID != 3 || found.Coordinators[0].Host != "gw3."+listener {
		t.Errorf("FindCoordinator v4 %+v, want broker 3", found.Coordinators)
	}
	freq.Version = 3
	freq.CoordinatorKey = "g"
	if old := c.roundTrip(freq).(*kmsg.FindCoordinatorResponse); old.NodeID != 3 || old.Host != "gw3."+listener {
		t.Errorf("FindCoordinator v3 node %d host %s, want broker 3", old.NodeID, old.Host)
	}

	dreq := kmsg.NewPtrDescribeClusterRequest()
	cluster := c.roundTrip(dreq).(*kmsg.DescribeClusterResponse)
	if cluster.ControllerID != 2 || len(cluster.Brokers) != 3 {
		t.Errorf("DescribeCluster controller %d brokers %+v, want 2 and three brokers", cluster.ControllerID, cluster.Brokers)
	}
}

// TestRequestsForAnotherGatewayAreRefused: this gateway (node 1) leads partitions 0 and 3 of
// threeGateways, coordinates no group and is not the controller, so clients are sent on.
func TestRequestsForAnotherGatewayAreRefused(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, placement: threeGateways{}})
	if g.config.NodeID != 1 {
		t.Fatalf("the harness runs node %d, this test expects node 1", g.config.NodeID)
	}
	g.mkTopic(g.config.DefaultStream, "placed", 3)
	c := dialRaw(t, g.addr)

	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.MaxBytes = 12, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "placed"
	for p := range int32(3) {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.PartitionMaxBytes = p, 1<<20
		ft.Partitions = append(ft.Partitions, fp)
	}
	fetch.Topics = append(fetch.Topics, ft)
	fr := c.roundTrip(fetch).(*kmsg.FetchResponse)
	for _, p := range fr.Topics[0].Partitions {
		want := int16(0)
		if p.Partition != 0 {
			want = 6 // NOT_LEADER_OR_FOLLOWER
		}
		if p.ErrorCode != want {
			t.Errorf("Fetch partition %d: error %d, want %d", p.Partition, p.ErrorCode, want)
		}
	}

	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.ProtocolType, join.SessionTimeoutMillis = 5, "g", "consumer", 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	if r := c.roundTrip(join).(*kmsg.JoinGroupResponse); r.ErrorCode != 16 {
		t.Errorf("JoinGroup: error %d, want NOT_COORDINATOR (16)", r.ErrorCode)
	}
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version, of.Group = 5, "g"
	if r := c.roundTrip(of).(*kmsg.OffsetFetchResponse); r.ErrorCode != 16 {
		t.Errorf("OffsetFetch: error %d, want NOT_COORDINATOR (16)", r.ErrorCode)
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"g", "h"}
	if r := c.roundTrip(dg).(*kmsg.DescribeGroupsResponse); len(r.Groups) != 2 || r.Groups[0].ErrorCode != 16 || r.Groups[1].ErrorCode != 16 {
		t.Errorf("DescribeGroups: %+v, want NOT_COORDINATOR for both", r.Groups)
	}

	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version = 4
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "new", 1, 1
	ct.Topics = append(ct.Topics, rt)
	if r := c.roundTrip(ct).(*kmsg.CreateTopicsResponse); r.Topics[0].ErrorCode != 41 {
		t.Errorf("CreateTopics: error %d, want NOT_CONTROLLER (41)", r.Topics[0].ErrorCode)
	}
}
