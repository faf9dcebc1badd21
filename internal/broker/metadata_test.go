package broker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

func TestMetadataWithKadm(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "orders", 3)
	g.mkTopic("kafka", "events.v1", 1)
	g.mkTopic(topicmap.InternalStream, "coordinator", 16) // reserved: never shown
	g.mkTopic("elsewhere", "unmapped", 1)                 // stream not in the map: not reachable
	_, adm := g.kafka()
	ctx := ctxT(t)

	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := topics.Names(), []string{"events.v1", "orders"}; !slices.Equal(sorted(got), want) {
		t.Fatalf("ListTopics = %v, want %v", got, want)
	}
	orders := topics["orders"]
	if len(orders.Partitions) != 3 {
		t.Fatalf("orders partitions = %d", len(orders.Partitions))
	}
	for _, p := range orders.Partitions.Sorted() {
		if p.Leader != 1 || !slices.Equal(p.Replicas, []int32{1}) || !slices.Equal(p.ISR, []int32{1}) || p.Err != nil {
			t.Errorf("partition %+v", p)
		}
	}

	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	host, port := hostPort(t, g.addr)
	if len(md.Brokers) != 1 || md.Brokers[0].NodeID != 1 || md.Brokers[0].Host != host || md.Brokers[0].Port != port {
		t.Fatalf("brokers = %+v", md.Brokers)
	}
	if md.Cluster != ClusterID("test") || md.Controller != 1 {
		t.Errorf("cluster %q controller %d", md.Cluster, md.Controller)
	}

	named, err := adm.Metadata(ctx, "orders", "missing", "bad name!")
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]error{"orders": nil, "missing": kerr.UnknownTopicOrPartition, "bad name!": kerr.InvalidTopicException}
	for name, want := range checks {
		if got := named.Topics[name].Err; !errors.Is(got, want) && got != want {
			t.Errorf("%s: err %v, want %v", name, got, want)
		}
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

// Every Metadata version decodes and carries the expected fields.
func TestMetadataAllVersions(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "t1", 2)
	host, port := hostPort(t, g.addr)
	for v := int16(0); v <= 12; v++ {
		c := dialRaw(t, g.addr)
		for _, named := range []bool{false, true} {
			req := kmsg.NewPtrMetadataRequest()
			req.Version = v
			if named {
				for _, n := range []string{"t1", "nope"} {
					rt := kmsg.NewMetadataRequestTopic()
					rt.Topic = kmsg.StringPtr(n)
					req.Topics = append(req.Topics, rt)
				}
			} else if v >= 1 {
				req.Topics = nil // null: all topics (v0 uses an empty list, the default)
			}
			resp := c.roundTrip(req).(*kmsg.MetadataResponse)
			if len(resp.Brokers) != 1 || resp.Brokers[0].Host != host || resp.Brokers[0].Port != port {
				t.Fatalf("v%d: brokers %+v", v, resp.Brokers)
			}
			if v >= 1 && resp.ControllerID != 1 {
				t.Errorf("v%d: controller %d", v, resp.ControllerID)
			}
			if v >= 2 && (resp.ClusterID == nil || *resp.ClusterID != ClusterID("test")) {
				t.Errorf("v%d: cluster id %v", v, resp.ClusterID)
			}
			var names []string
			for _, tp := range resp.Topics {
				names = append(names, *tp.Topic)
				switch *tp.Topic {
				case "t1":
					if tp.ErrorCode != 0 || len(tp.Partitions) != 2 {
						t.Errorf("v%d: t1 %+v", v, tp)
					}
				case "nope":
					if tp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
						t.Errorf("v%d: nope code %d", v, tp.ErrorCode)
					}
				}
			}
			want := []string{"t1"}
			if named {
				want = []string{"t1", "nope"}
			}
			if !slices.Equal(names, want) {
				t.Errorf("v%d named=%v: topics %v, want %v", v, named, names, want)
			}
		}
	}
	// v1+: an empty list asks for no topics.
	c := dialRaw(t, g.addr)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 5
	req.Topics = []kmsg.MetadataRequestTopic{}
	if resp := c.roundTrip(req).(*kmsg.MetadataResponse); len(resp.Topics) != 0 {
		t.Errorf("empty list returned %d topics", len(resp.Topics))
	}
	// v10+: lookups by topic id are not supported.
	req = kmsg.NewPtrMetadataRequest()
	req.Version = 12
	rt := kmsg.NewMetadataRequestTopic()
	rt.TopicID = [16]byte{1}
	req.Topics = []kmsg.MetadataRequestTopic{rt}
	if resp := c.roundTrip(req).(*kmsg.MetadataResponse); len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Errorf("topic id lookup: %+v", resp.Topics)
	}
}

func TestMetadataAutoCreate(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{
		"IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED=true", "IGGY_KAFKA_AUTO_CREATE_TOPICS_PARTITIONS=4"}})
	c := dialRaw(t, g.addr)
	ask := func(v int16, allow bool, name string) kmsg.MetadataResponseTopic {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		req.AllowAutoTopicCreation = allow
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = []kmsg.MetadataRequestTopic{rt}
		return c.roundTrip(req).(*kmsg.MetadataResponse).Topics[0]
	}
	if tp := ask(9, false, "not-allowed"); tp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("client said no auto-create: code %d", tp.ErrorCode)
	}
	if tp := ask(9, true, "created"); tp.ErrorCode != 0 || len(tp.Partitions) != 4 {
		t.Errorf("auto-create: %+v", tp)
	}
	if tp := ask(3, false, "old-client"); tp.ErrorCode != 0 || len(tp.Partitions) != 4 { // v0–3 always allow
		t.Errorf("v3 auto-create: %+v", tp)
	}
	if tp := ask(9, true, "bad/name"); tp.ErrorCode != kerr.InvalidTopicException.Code {
		t.Errorf("invalid name: %+v", tp)
	}
	topic, err := g.iggy.GetTopic(context.Background(), iggy.Name("kafka"), iggy.Name("created"))
	if err != nil || topic.PartitionsCount != 4 {
		t.Fatalf("Iggy topic: %+v, %v", topic, err)
	}
	if tp := ask(9, true, "created"); tp.ErrorCode != 0 || len(tp.Partitions) != 4 {
		t.Errorf("second ask: %+v", tp)
	}
}

// Auto-create into a mapped stream that does not exist yet creates the stream too.
func TestMetadataAutoCreateMappedStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "map.toml")
	os.WriteFile(path, []byte("default_stream = \"kafka\"\n[topics.orders]\nstream = \"billing\"\ntopic = \"orders_v2\"\n"), 0o600)
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{
		"IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED=true", "IGGY_KAFKA_TOPIC_MAP_PATH=" + path}})
	_, adm := g.kafka(kgoAllowAutoCreate())
	ctx := ctxT(t)
	md, err := adm.Metadata(ctx, "orders")
	if err != nil || md.Topics["orders"].Err != nil {
		t.Fatalf("%v %v", err, md.Topics["orders"].Err)
	}
	if _, err := g.iggy.GetTopic(ctx, iggy.Name("billing"), iggy.Name("orders_v2")); err != nil {
		t.Fatalf("mapped topic not created: %v", err)
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil || !slices.Equal(topics.Names(), []string{"orders"}) {
		t.Fatalf("ListTopics = %v, %v", topics.Names(), err)
	}
}

// Without the bridge nothing may look stored: named topics are unknown, the list is empty.
func TestMetadataWithoutBridge(t *testing.T) {
	g := startGateway(t, gatewayOpts{env: []string{"IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED=true"}})
	_, adm := g.kafka()
	ctx := ctxT(t)
	topics, err := adm.ListTopics(ctx)
	if err != nil || len(topics) != 0 {
		t.Fatalf("ListTopics = %v, %v", topics, err)
	}
	md, err := adm.Metadata(ctx, "orders")
	if err != nil || !errors.Is(md.Topics["orders"].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("named: %v %v", err, md.Topics["orders"].Err)
	}
	if len(md.Brokers) != 1 {
		t.Fatalf("brokers %+v", md.Brokers)
	}
}

// failingIggy makes topic reads fail like an unreachable Iggy.
type failingIggy struct {
	iggy.API
	err error
}

func (f failingIggy) GetTopic(context.Context, iggy.Identifier, iggy.Identifier) (*iggy.Topic, error) {
	return nil, f.err
}

func (f failingIggy) GetTopics(context.Context, iggy.Identifier) ([]iggy.Topic, error) {
	return nil, f.err
}

func TestMetadataIggyFailures(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code int16
	}{
		{"connection", &iggy.ConnError{Op: "get_topic", Err: errors.New("refused")}, kerr.LeaderNotAvailable.Code},
		{"unauthorized", &iggy.Error{Code: iggy.CodeUnauthorized, Op: "get_topic"}, kerr.TopicAuthorizationFailed.Code},
		{"deadline", context.DeadlineExceeded, kerr.RequestTimedOut.Code},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := startGateway(t, gatewayOpts{bridge: true, wrap: func(api iggy.API) iggy.API { return failingIggy{api, tt.err} }})
			c := dialRaw(t, g.addr)
			req := kmsg.NewPtrMetadataRequest()
			req.Version = 9
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr("orders")
			req.Topics = []kmsg.MetadataRequestTopic{rt}
			if resp := c.roundTrip(req).(*kmsg.MetadataResponse); resp.Topics[0].ErrorCode != tt.code {
				t.Errorf("code %d, want %d", resp.Topics[0].ErrorCode, tt.code)
			}
			// Listing all topics cannot report an error: the connection is closed instead of
			// answering with an empty list that would look like every topic was deleted.
			req.Topics = nil
			c.send(req, 1)
			if f := c.frame(); f != nil {
				t.Error("all-topics listing answered despite the Iggy failure")
			}
		})
	}
}

func TestClusterIDIsStable(t *testing.T) {
	a, b := ClusterID("x"), ClusterID("x")
	if a != b || len(a) != 22 || ClusterID("y") == a || strings.ContainsAny(a, "+/=") {
		t.Fatalf("ClusterID: %q %q", a, b)
	}
}
