package broker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
)

func TestCreateTopicsWithKadm(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_AUTO_CREATE_TOPICS_PARTITIONS=3"}})
	_, adm := g.kafka()
	ctx := ctxT(t)

	retention := "86400000"
	size := "2147483648"
	created, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"retention.ms": &retention, "retention.bytes": &size}, "orders")
	if err != nil || created.Err != nil {
		t.Fatalf("create: %v %v", err, created.Err)
	}
	if created.NumPartitions != 2 || created.ReplicationFactor != 1 {
		t.Errorf("created %d partitions, replication %d", created.NumPartitions, created.ReplicationFactor)
	}
	tp := g.iggyTopic("kafka", "orders")
	if tp == nil || tp.PartitionsCount != 2 || tp.MessageExpiry != 86_400_000_000 || tp.MaxTopicSize != 2<<30 {
		t.Fatalf("Iggy topic %+v, want 2 partitions, expiry 86400000000 µs, max size 2 GiB", tp)
	}

	// kadm's CreateTopic also returns a single topic's error as its error.
	if dup, _ := adm.CreateTopic(ctx, 2, 1, nil, "orders"); !errors.Is(dup.Err, kerr.TopicAlreadyExists) {
		t.Errorf("duplicate create: %v, want TOPIC_ALREADY_EXISTS", dup.Err)
	}

	// -1 partitions and replication factor: the defaults (num.partitions = 3 here, 1 replica).
	def, err := adm.CreateTopic(ctx, -1, -1, nil, "defaults")
	if err != nil || def.Err != nil || def.NumPartitions != 3 || def.ReplicationFactor != 1 {
		t.Errorf("create with defaults: %v %+v", err, def)
	}
	if tp := g.iggyTopic("kafka", "defaults"); tp == nil || tp.PartitionsCount != 3 || tp.MessageExpiry != iggy.Never || tp.MaxTopicSize != iggy.Never {
		t.Errorf("Iggy topic for defaults: %+v", tp)
	}

	// Validate-only: everything is checked, nothing is created.
	valid, err := adm.ValidateCreateTopics(ctx, 4, 1, map[string]*string{"retention.ms": &retention}, "dry")
	if err != nil || valid["dry"].Err != nil || valid["dry"].NumPartitions != 4 {
		t.Errorf("validate-only create: %v %+v", err, valid["dry"])
	}
	if g.iggyTopic("kafka", "dry") != nil {
		t.Error("validate-only create created the topic")
	}
	invalid, err := adm.ValidateCreateTopics(ctx, 0, 1, nil, "dry")
	if err != nil || !errors.Is(invalid["dry"].Err, kerr.InvalidPartitions) {
		t.Errorf("validate-only create of 0 partitions: %v %v", err, invalid["dry"].Err)
	}
	exists, err := adm.ValidateCreateTopics(ctx, 1, 1, nil, "orders")
	if err != nil || !errors.Is(exists["orders"].Err, kerr.TopicAlreadyExists) {
		t.Errorf("validate-only create of an existing topic: %v %v", err, exists["orders"].Err)
	}

	// Metadata sees a created topic at once.
	if md := g.metadataOf("orders"); md.ErrorCode != 0 || len(md.Partitions) != 2 {
		t.Errorf("metadata after create: error %d, %d partitions", md.ErrorCode, len(md.Partitions))
	}
}

// Each refusal carries Kafka's code and a message that says what is wrong.
func TestCreateTopicsRefusals(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "exists", 1)
	c := dialRaw(t, g.addr)
	str := kmsg.StringPtr
	topic := func(name string, partitions int32, rf int16, configs ...kmsg.CreateTopicsRequestTopicConfig) kmsg.CreateTopicsRequestTopic {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor, rt.Configs = name, partitions, rf, configs
		return rt
	}
	cfg := func(name string, value *string) kmsg.CreateTopicsRequestTopicConfig {
		return kmsg.CreateTopicsRequestTopicConfig{Name: name, Value: value}
	}
	assigned := func(name string, as ...kmsg.CreateTopicsRequestTopicReplicaAssignment) kmsg.CreateTopicsRequestTopic {
		rt := topic(name, -1, -1)
		rt.ReplicaAssignment = as
		return rt
	}
	on := func(p int32, replicas ...int32) kmsg.CreateTopicsRequestTopicReplicaAssignment {
		return kmsg.CreateTopicsRequestTopicReplicaAssignment{Partition: p, Replicas: replicas}
	}
	for _, tc := range []struct {
		name    string
		topic   kmsg.CreateTopicsRequestTopic
		want    int16
		message string // part of the error message
	}{
		{"empty name", topic("", 1, 1), kerr.InvalidTopicException.Code, "empty"},
		{"bad character", topic("a/b", 1, 1), kerr.InvalidTopicException.Code, "contains"},
		{"dot", topic(".", 1, 1), kerr.InvalidTopicException.Code, "reserved"},
		{"too long", topic(strings.Repeat("x", 250), 1, 1), kerr.InvalidTopicException.Code, "249"},
		{"exists", topic("exists", 1, 1), kerr.TopicAlreadyExists.Code, "already exists"},
		{"exists wins over bad partitions", topic("exists", 0, 1), kerr.TopicAlreadyExists.Code, "already exists"},
		{"zero partitions", topic("p0", 0, 1), kerr.InvalidPartitions.Code, "larger than 0"},
		{"negative partitions", topic("p-2", -2, 1), kerr.InvalidPartitions.Code, "larger than 0"},
		{"too many partitions", topic("p1001", 1001, 1), kerr.InvalidPartitions.Code, "at most 1000"},
		{"replication 3", topic("rf3", 1, 3), kerr.InvalidReplicationFactor.Code, "Iggy replicates"},
		{"replication 0", topic("rf0", 1, 0), kerr.InvalidReplicationFactor.Code, "larger than 0"},
		{"unsupported config", topic("c1", 1, 1, cfg("remote.storage.enable", str("true"))), kerr.InvalidConfig.Code, "remote.storage.enable"},
		{"bad cleanup.policy", topic("c2", 1, 1, cfg("cleanup.policy", str("compact,compact"))), kerr.InvalidConfig.Code, "compact,delete"},
		{"compact with retention", topic("c7", 1, 1, cfg("cleanup.policy", str("compact")), cfg("retention.ms", str("1000"))), kerr.InvalidConfig.Code, "never deletes"},
		{"compression codec", topic("c8", 1, 1, cfg("compression.type", str("zstd"))), kerr.InvalidConfig.Code, "uncompressed"},
		{"bad segment.bytes", topic("c9", 1, 1, cfg("segment.bytes", str("10"))), kerr.InvalidConfig.Code, "segment.bytes"},
		{"null config", topic("c3", 1, 1, cfg("retention.ms", nil)), kerr.InvalidConfig.Code, "null value"},
		{"bad retention.ms", topic("c4", 1, 1, cfg("retention.ms", str("soon"))), kerr.InvalidConfig.Code, "not a number"},
		{"zero retention.ms", topic("c5", 1, 1, cfg("retention.ms", str("0"))), kerr.InvalidConfig.Code, "retention.ms"},
		{"small retention.bytes", topic("c6", 1, 1, cfg("retention.bytes", str("1000"))), kerr.InvalidConfig.Code, "segment"},
		{"two retention spellings", topic("c7", 1, 1, cfg("retention.ms", str("1000")), cfg("retention.hours", str("1"))), kerr.InvalidConfig.Code, "use one"},
		{"assignment with partitions", func() kmsg.CreateTopicsRequestTopic {
			rt := assigned("a1", on(0, 1))
			rt.NumPartitions = 1
			return rt
		}(), kerr.InvalidRequest.Code, "number of partitions"},
		{"assignment with replication", func() kmsg.CreateTopicsRequestTopic {
			rt := assigned("a2", on(0, 1))
			rt.ReplicationFactor = 1
			return rt
		}(), kerr.InvalidRequest.Code, "replication factor"},
		{"assignment to another broker", assigned("a3", on(0, 2)), kerr.InvalidReplicaAssignment.Code, "broker 2"},
		{"assignment twice to a broker", assigned("a4", on(0, 1, 1)), kerr.InvalidReplicaAssignment.Code, "more than once"},
		{"assignment without replicas", assigned("a5", on(0)), kerr.InvalidReplicaAssignment.Code, "empty"},
		{"assignment with a gap", assigned("a6", on(0, 1), on(2, 1)), kerr.InvalidReplicaAssignment.Code, "numbered 0 to 1"},
		{"partition assigned twice", assigned("a7", on(0, 1), on(0, 1)), kerr.InvalidReplicaAssignment.Code, "more than once"},
	} {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = 7
		req.Topics = []kmsg.CreateTopicsRequestTopic{tc.topic}
		r := c.roundTrip(req).(*kmsg.CreateTopicsResponse).Topics[0]
		wantCode(t, tc.name, r.ErrorCode, r.ErrorMessage, tc.want)
		if r.ErrorMessage == nil || !strings.Contains(*r.ErrorMessage, tc.message) {
			t.Errorf("%s: message %v, want it to mention %q", tc.name, r.ErrorMessage, tc.message)
		}
		if r.NumPartitions != -1 || r.ReplicationFactor != -1 || len(r.Configs) != 0 {
			t.Errorf("%s: failed result carries %d partitions, rf %d, configs %v", tc.name, r.NumPartitions, r.ReplicationFactor, r.Configs)
		}
		if tc.topic.Topic != "exists" && tc.topic.Topic != "" && g.iggyTopic("kafka", tc.topic.Topic) != nil {
			t.Errorf("%s: topic created anyway", tc.name)
		}
	}
}

// A manual assignment onto this gateway is honoured; a repeated topic is answered once with
// INVALID_REQUEST and not created.
func TestCreateTopicsAssignmentAndRepeats(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	c := dialRaw(t, g.addr)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	manual := kmsg.NewCreateTopicsRequestTopic()
	manual.Topic, manual.NumPartitions, manual.ReplicationFactor = "manual", -1, -1
	manual.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 1, Replicas: []int32{1}}, {Partition: 0, Replicas: []int32{1}}}
	twice := kmsg.NewCreateTopicsRequestTopic()
	twice.Topic, twice.NumPartitions, twice.ReplicationFactor = "twice", 1, 1
	req.Topics = []kmsg.CreateTopicsRequestTopic{twice, manual, twice, twice}
	resp := c.roundTrip(req).(*kmsg.CreateTopicsResponse)
	if len(resp.Topics) != 2 {
		t.Fatalf("%d results, want 2: %+v", len(resp.Topics), resp.Topics)
	}
	wantCode(t, "repeated topic", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, kerr.InvalidRequest.Code)
	wantCode(t, "manual assignment", resp.Topics[1].ErrorCode, resp.Topics[1].ErrorMessage, 0)
	if resp.Topics[1].NumPartitions != 2 {
		t.Errorf("manual assignment: %d partitions", resp.Topics[1].NumPartitions)
	}
	if tp := g.iggyTopic("kafka", "manual"); tp == nil || tp.PartitionsCount != 2 {
		t.Errorf("Iggy topic for the manual assignment: %+v", tp)
	}
	if g.iggyTopic("kafka", "twice") != nil {
		t.Error("repeated topic created")
	}
}

// Every version decodes and answers; v5+ carries the partition count, replication factor and
// the topic's configs; v1+ error messages.
func TestCreateTopicsAllVersions(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	c := dialRaw(t, g.addr)
	for v := int16(2); v <= 7; v++ {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = v
		req.TimeoutMillis = 5000
		ok := kmsg.NewCreateTopicsRequestTopic()
		ok.Topic, ok.NumPartitions, ok.ReplicationFactor = "v"+string(rune('0'+v)), 2, 1
		ok.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "retention.ms", Value: kmsg.StringPtr("60000")}}
		bad := kmsg.NewCreateTopicsRequestTopic()
		bad.Topic, bad.NumPartitions, bad.ReplicationFactor = "bad!", 1, 1
		req.Topics = []kmsg.CreateTopicsRequestTopic{ok, bad}
		resp := c.roundTrip(req).(*kmsg.CreateTopicsResponse)
		if len(resp.Topics) != 2 || resp.Topics[0].Topic != ok.Topic || resp.Topics[1].Topic != "bad!" {
			t.Fatalf("v%d: topics %+v", v, resp.Topics)
		}
		r := resp.Topics[0]
		wantCode(t, "create", r.ErrorCode, r.ErrorMessage, 0)
		if tp := g.iggyTopic("kafka", ok.Topic); tp == nil || tp.PartitionsCount != 2 || tp.MessageExpiry != 60_000_000 {
			t.Errorf("v%d: Iggy topic %+v", v, tp)
		}
		wantCode(t, "bad name", resp.Topics[1].ErrorCode, resp.Topics[1].ErrorMessage, kerr.InvalidTopicException.Code)
		if resp.Topics[1].ErrorMessage == nil {
			t.Errorf("v%d: no error message", v)
		}
		if v < 5 {
			continue
		}
		if r.NumPartitions != 2 || r.ReplicationFactor != 1 || r.ConfigErrorCode != 0 {
			t.Errorf("v%d: partitions %d, rf %d, config error %d", v, r.NumPartitions, r.ReplicationFactor, r.ConfigErrorCode)
		}
		configs := map[string]kmsg.CreateTopicsResponseTopicConfig{}
		for _, c := range r.Configs {
			configs[c.Name] = c
		}
		if c := configs["retention.ms"]; c.Value == nil || *c.Value != "60000" || c.Source != int8(kmsg.ConfigSourceDynamicTopicConfig) {
			t.Errorf("v%d: retention.ms %+v", v, c)
		}
		if c := configs["retention.bytes"]; c.Value == nil || *c.Value != "-1" || c.Source != int8(kmsg.ConfigSourceDefaultConfig) {
			t.Errorf("v%d: retention.bytes %+v", v, c)
		}
		if c := configs["cleanup.policy"]; c.Value == nil || *c.Value != "delete" || c.ReadOnly || c.Source != int8(kmsg.ConfigSourceDefaultConfig) {
			t.Errorf("v%d: cleanup.policy %+v", v, c)
		}
	}
}

// A topic of the topic map goes to its stream, which is created when missing.
func TestCreateTopicsCreatesMappedStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "map.toml")
	if err := os.WriteFile(path, []byte("default_stream = \"kafka\"\n[topics.orders]\nstream = \"billing\"\ntopic = \"orders_v2\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_TOPIC_MAP_PATH=" + path}})
	_, adm := g.kafka()
	created, err := adm.CreateTopic(ctxT(t), 1, 1, nil, "orders")
	if err != nil || created.Err != nil {
		t.Fatalf("create: %v %v", err, created.Err)
	}
	if g.iggyTopic("billing", "orders_v2") == nil {
		t.Fatal("billing/orders_v2 not created")
	}
	if g.iggyTopic("kafka", "orders") != nil {
		t.Fatal("the default stream got the mapped topic")
	}
}

// Behind a 3-node Iggy cluster, Kafka's default replication factor for internal topics (3) is
// accepted and reported, more than the cluster holds is INVALID_REPLICATION_FACTOR with a
// message, and Metadata lists as many replicas as there are Iggy copies and gateways to name
// them: the leader first.
func TestReplicationFactorFollowsTheIggyCluster(t *testing.T) {
	for _, tc := range []struct {
		name      string
		placement placement.Placement
		replicas  int
	}{
		{"one gateway", nil, 1},
		{"three gateways", controllerHere{}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateway(t, gatewayOpts{bridge: true, iggyNodes: 3, placement: tc.placement})
			ctx := ctxT(t)
			create := func(name string, rf int16) kmsg.CreateTopicsResponseTopic {
				req := kmsg.NewPtrCreateTopicsRequest()
				req.Version, req.TimeoutMillis = 7, 5000
				rt := kmsg.NewCreateTopicsRequestTopic()
				rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 3, rf
				req.Topics = append(req.Topics, rt)
				resp, err := g.b.createTopics(ctx, dataConn, req)
				if err != nil {
					t.Fatal(err)
				}
				return resp.(*kmsg.CreateTopicsResponse).Topics[0]
			}
			for _, rf := range []int16{-1, 1, 3} {
				if r := create(fmt.Sprintf("rf%d", rf), rf); r.ErrorCode != 0 || r.ReplicationFactor != 3 {
					t.Fatalf("replication factor %d: code %d, reported %d, want accepted and 3", rf, r.ErrorCode, r.ReplicationFactor)
				}
			}
			over := create("rf4", 4)
			if over.ErrorCode != kerr.InvalidReplicationFactor.Code || over.ErrorMessage == nil || !strings.Contains(*over.ErrorMessage, "3 Iggy node(s)") {
				t.Errorf("replication factor 4: code %d %v, want INVALID_REPLICATION_FACTOR naming the cluster size", over.ErrorCode, over.ErrorMessage)
			}
			if g.iggyTopic("kafka", "rf4") != nil {
				t.Error("a refused topic was created")
			}
			req := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr("rf3")
			req.Topics = append(req.Topics, rt)
			resp, err := g.b.metadata(ctx, dataConn, req)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range resp.(*kmsg.MetadataResponse).Topics[0].Partitions {
				if len(p.Replicas) != tc.replicas || p.Replicas[0] != p.Leader || !slices.Equal(p.ISR, p.Replicas) {
					t.Errorf("partition %d: leader %d replicas %v isr %v, want %d replicas, the leader first, all in sync", p.Partition, p.Leader, p.Replicas, p.ISR, tc.replicas)
				}
			}
		})
	}
}

// controllerHere is threeGateways with this gateway (node 1) as the controller, which
// CreateTopics needs.
type controllerHere struct{ threeGateways }

func (controllerHere) Controller() int32 { return 1 }
