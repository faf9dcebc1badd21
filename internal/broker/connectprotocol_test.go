package broker

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestConnectProtocolRelayed: a group of protocol type "connect" (Kafka Connect's workers)
// joins and syncs through the classic protocol with its metadata and assignment relayed
// verbatim, and DescribeGroups reports the type and protocol.
func TestConnectProtocolRelayed(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	cl, _ := g.kafka()
	ctx := ctxT(t)
	meta, assignment := []byte("worker-url http://w1:8083 config-offset 7"), []byte("leader=w1 connectors=[file-source]")
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version = 5
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "connect-cluster", "connect", 10000, 10000
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "sessioned", meta
	join.Protocols = append(join.Protocols, p)
	jr, err := join.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if jr.ErrorCode == kerr.MemberIDRequired.Code {
		join.MemberID = jr.MemberID
		if jr, err = join.RequestWith(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	if jr.ErrorCode != 0 || jr.Protocol == nil || *jr.Protocol != "sessioned" || jr.LeaderID != jr.MemberID ||
		len(jr.Members) != 1 || !bytes.Equal(jr.Members[0].ProtocolMetadata, meta) {
		t.Fatalf("join: %+v", jr)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version = 5
	sync.Group, sync.Generation, sync.MemberID = "connect-cluster", jr.Generation, jr.MemberID
	sync.ProtocolType, sync.Protocol = kmsg.StringPtr("connect"), kmsg.StringPtr("sessioned")
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID, a.MemberAssignment = jr.MemberID, assignment
	sync.GroupAssignment = append(sync.GroupAssignment, a)
	sr, err := sync.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if sr.ErrorCode != 0 || !bytes.Equal(sr.MemberAssignment, assignment) {
		t.Fatalf("sync: error %d, assignment %q", sr.ErrorCode, sr.MemberAssignment)
	}
	desc := kmsg.NewPtrDescribeGroupsRequest()
	desc.Groups = []string{"connect-cluster"}
	dr, err := desc.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if d := dr.Groups[0]; d.ProtocolType != "connect" || d.Protocol != "sessioned" || len(d.Members) != 1 || !bytes.Equal(d.Members[0].MemberAssignment, assignment) {
		t.Errorf("describe: %+v", d)
	}
}
