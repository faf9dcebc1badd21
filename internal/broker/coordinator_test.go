package broker

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/versions"
)

func kgoAllowAutoCreate() kgo.Opt { return kgo.AllowAutoTopicCreation() }

func TestFindCoordinatorAllVersions(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	host, port := hostPort(t, g.addr)
	c := dialRaw(t, g.addr)
	for v := int16(0); v <= 3; v++ {
		for _, tt := range []struct {
			keyType int8
			code    int16
		}{{0, 0}, {1, kerr.TransactionalIDAuthorizationFailed.Code}, {7, kerr.InvalidRequest.Code}} {
			if v == 0 && tt.keyType != 0 {
				continue // v0 has no key type: always a group
			}
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.Version = v
			req.CoordinatorKey = "g1"
			req.CoordinatorType = tt.keyType
			resp := c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
			if resp.ErrorCode != tt.code {
				t.Errorf("v%d type %d: code %d, want %d", v, tt.keyType, resp.ErrorCode, tt.code)
			}
			if tt.code == 0 && (resp.NodeID != 1 || resp.Host != host || resp.Port != port) {
				t.Errorf("v%d: coordinator %d %s:%d", v, resp.NodeID, resp.Host, resp.Port)
			}
		}
	}
	for v := int16(4); v <= 6; v++ {
		for _, tt := range []struct {
			keyType int8
			code    int16
		}{{0, 0}, {1, kerr.TransactionalIDAuthorizationFailed.Code}, {2, kerr.InvalidRequest.Code}} {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.Version = v
			req.CoordinatorType = tt.keyType
			req.CoordinatorKeys = []string{"a", "b", "c"}
			resp := c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
			if len(resp.Coordinators) != 3 {
				t.Fatalf("v%d: %d coordinators", v, len(resp.Coordinators))
			}
			for i, co := range resp.Coordinators {
				if co.Key != req.CoordinatorKeys[i] || co.ErrorCode != tt.code {
					t.Errorf("v%d type %d: %+v", v, tt.keyType, co)
				}
				if tt.code == 0 && (co.NodeID != 1 || co.Host != host || co.Port != port) {
					t.Errorf("v%d: %+v", v, co)
				}
			}
		}
	}
}

func TestFindCoordinatorWithKadm(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	_, adm := g.kafka()
	host, port := hostPort(t, g.addr)
	resps := adm.FindGroupCoordinators(ctxT(t), "g1", "g2")
	for _, group := range []string{"g1", "g2"} {
		r, ok := resps[group]
		if !ok || r.Err != nil || r.NodeID != 1 || r.Host != host || r.Port != port {
			t.Errorf("%s: %+v", group, r)
		}
	}
}

func TestInitProducerID(t *testing.T) {
	g := startGateway(t, gatewayOpts{}) // works without the bridge
	c := dialRaw(t, g.addr)
	seen := map[int64]bool{}
	for v := int16(0); v <= 5; v++ {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version = v
		resp := c.roundTrip(req).(*kmsg.InitProducerIDResponse)
		if resp.ErrorCode != 0 || resp.ProducerID < 0 || resp.ProducerEpoch != 0 || seen[resp.ProducerID] {
			t.Errorf("v%d: %+v", v, resp)
		}
		seen[resp.ProducerID] = true

		req.TransactionalID = kmsg.StringPtr("txn-1")
		resp = c.roundTrip(req).(*kmsg.InitProducerIDResponse)
		if resp.ErrorCode != kerr.UnsupportedVersion.Code || resp.ProducerID != -1 {
			t.Errorf("v%d transactional: %+v", v, resp)
		}
	}
	// A producer id from the client's previous session is not reused with a bumped epoch:
	// like Kafka for non-transactional producers, the gateway hands out a new id.
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = 4
	req.ProducerID, req.ProducerEpoch = 12345, 3
	resp := c.roundTrip(req).(*kmsg.InitProducerIDResponse)
	if resp.ErrorCode != 0 || resp.ProducerID == 12345 || resp.ProducerEpoch != 0 {
		t.Errorf("re-init: %+v", resp)
	}
}

// Without a transaction coordinator (a broker the gateway did not wire one into: several
// gateways, or no idempotence; docs/TRANSACTIONS.md) a franz-go transactional producer must
// fail clearly with 53 (from FindCoordinator), not hang or retry forever. With one:
// internal/gateway's TestTransactionsEndToEnd.
func TestTransactionalClientIsRefused(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "x", 1)
	cl, _ := g.kafka(kgo.TransactionalID("tx"))
	err := cl.BeginTransaction() // franz-go may already know the producer id failed
	if err == nil {
		err = cl.ProduceSync(ctxT(t), &kgo.Record{Topic: "x", Value: []byte("v")}).FirstErr()
	}
	if err == nil || !strings.Contains(err.Error(), kerr.TransactionalIDAuthorizationFailed.Message) {
		t.Fatalf("err = %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", err)
	}
}

func TestDescribeCluster(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	host, port := hostPort(t, g.addr)
	c := dialRaw(t, g.addr)
	for v := int16(0); v <= 1; v++ {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version = v
		resp := c.roundTrip(req).(*kmsg.DescribeClusterResponse)
		if resp.ErrorCode != 0 || resp.ClusterID != ClusterID("test") || resp.ControllerID != 1 ||
			len(resp.Brokers) != 1 || resp.Brokers[0].Host != host || resp.Brokers[0].Port != port {
			t.Errorf("v%d: %+v", v, resp)
		}
	}
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version = 1
	req.EndpointType = 2 // controllers
	if resp := c.roundTrip(req).(*kmsg.DescribeClusterResponse); resp.ErrorCode != kerr.MismatchedEndpointType.Code {
		t.Errorf("controller endpoints: code %d", resp.ErrorCode)
	}
}

func TestApiVersionsClientSoftware(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	c := dialRaw(t, g.addr)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "bad name", "1"
	if resp := c.roundTrip(req).(*kmsg.ApiVersionsResponse); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("invalid software name: code %d", resp.ErrorCode)
	}
	req.ClientSoftwareName, req.ClientSoftwareVersion = "apache-kafka-java", "4.0.0"
	resp := c.roundTrip(req).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("%+v", resp)
	}
	// franz-go negotiates through the KIP-511 path (it asks for a newer ApiVersions first).
	_, adm := g.kafka()
	vs, err := adm.ApiVersions(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range vs.Sorted() {
		if b.Err != nil || b.NodeID != 1 {
			t.Fatalf("broker %d: %v", b.NodeID, b.Err)
		}
		var got []int16
		b.EachKeySorted(func(key, min, max int16) {
			got = append(got, key)
			if a, ok := versions.Lookup(key); !ok || max != a.Max {
				t.Errorf("key %d advertised up to %d", key, max)
			}
		})
		if len(got) != len(versions.Advertised(false)) { // a PLAINTEXT listener: no SASL keys
			t.Errorf("advertised keys %v", got)
		}
	}
}
