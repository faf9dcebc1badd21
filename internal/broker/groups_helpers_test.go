package broker

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicstate"
)

// loadOffsetStore builds and loads the committed-offset store over Iggy, as the gateway does at
// startup.
func loadTopicState(t *testing.T, api iggylog.API) *topicstate.Store {
	t.Helper()
	s := topicstate.New(iggylog.NewTopic(api, iggylog.ReservedStream, topicstate.DefaultTopic, 1), testLogger(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Load(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func loadOffsetStore(t *testing.T, api iggylog.API) *offsets.Store {
	t.Helper()
	cfg := offsets.DefaultConfig(iggylog.NewTopic(api, iggylog.ReservedStream, offsets.DefaultTopic, offsets.DefaultPartitions))
	cfg.Logger = testLogger(t)
	s, err := offsets.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Load(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOffsetStore(s) })
	return s
}

// closeOffsetStore stops the store's log writers (registered after the Iggy client's cleanup,
// so it runs before the client closes).
func closeOffsetStore(s *offsets.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.Close(ctx)
}

// fastGroups is the coordinator configuration of tests: no initial rebalance delay.
func fastGroups() *groups.Config {
	cfg := groups.DefaultConfig()
	cfg.InitialRebalanceDelay = 0
	return &cfg
}

// subscription is consumer-protocol member metadata subscribing to topics.
func subscription(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = topics
	return m.AppendTo(nil)
}

// joinReq is a JoinGroup of a consumer-protocol member at version v.
func joinReq(v int16, group, memberID string, topics ...string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = v
	req.Group = group
	req.MemberID = memberID
	req.SessionTimeoutMillis = 30000
	req.RebalanceTimeoutMillis = 30000
	req.ProtocolType = "consumer"
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name = "range"
	p.Metadata = subscription(topics...)
	req.Protocols = append(req.Protocols, p)
	return req
}

// joinAlone joins group as its only member at version v (following MEMBER_ID_REQUIRED from
// v4) and syncs, giving itself assignment; it returns the member id and generation.
func joinAlone(t *testing.T, c *rawConn, v int16, group string, assignment []byte, topics ...string) (string, int32) {
	t.Helper()
	join := joinReq(v, group, "", topics...)
	resp := c.roundTrip(join).(*kmsg.JoinGroupResponse)
	if v >= 4 {
		if resp.ErrorCode != kerr.MemberIDRequired.Code || resp.MemberID == "" {
			t.Fatalf("JoinGroup v%d without member id: code %d, member %q; want MEMBER_ID_REQUIRED with an id", v, resp.ErrorCode, resp.MemberID)
		}
		join.MemberID = resp.MemberID
		resp = c.roundTrip(join).(*kmsg.JoinGroupResponse)
	}
	if resp.ErrorCode != 0 || resp.LeaderID != resp.MemberID || len(resp.Members) != 1 || resp.Generation < 1 {
		t.Fatalf("JoinGroup v%d: %+v", v, resp)
	}
	if v >= 7 && (resp.ProtocolType == nil || *resp.ProtocolType != "consumer") {
		t.Errorf("JoinGroup v%d: protocol type %v", v, resp.ProtocolType)
	}
	if p := resp.Protocol; p == nil || *p != "range" {
		t.Errorf("JoinGroup v%d: protocol %v, want range", v, p)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version = min(v, 5)
	sync.Group, sync.MemberID, sync.Generation = group, resp.MemberID, resp.Generation
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID, a.MemberAssignment = resp.MemberID, assignment
	sync.GroupAssignment = append(sync.GroupAssignment, a)
	sresp := c.roundTrip(sync).(*kmsg.SyncGroupResponse)
	if sresp.ErrorCode != 0 || string(sresp.MemberAssignment) != string(assignment) {
		t.Fatalf("SyncGroup v%d: code %d, assignment %q; want %q", sync.Version, sresp.ErrorCode, sresp.MemberAssignment, assignment)
	}
	return resp.MemberID, resp.Generation
}

// commitReq is an OffsetCommit at version v of one partition.
func commitReq(v int16, group, member string, generation int32, topic string, partition int32, offset int64, epoch int32, metadata *string) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = v
	req.Group, req.MemberID, req.Generation = group, member, generation
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = partition, offset, epoch, metadata
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// commitCodes flattens an OffsetCommit response to "topic/partition" → code.
func commitCodes(resp *kmsg.OffsetCommitResponse) map[string]int16 {
	out := map[string]int16{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[tp(t.Topic, p.Partition)] = p.ErrorCode
		}
	}
	return out
}

func tp(topic string, partition int32) string {
	return topic + "/" + strconv.Itoa(int(partition))
}

// fetchReq is an OffsetFetch at version v of group (v0-7 form) or groups (v8+), for the given
// partitions of topic, or for everything when topic is "".
func fetchReq(v int16, group, topic string, partitions ...int32) *kmsg.OffsetFetchRequest {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = v
	if v >= 8 {
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = group
		if topic != "" {
			t := kmsg.NewOffsetFetchRequestGroupTopic()
			t.Topic, t.Partitions = topic, partitions
			g.Topics = append(g.Topics, t)
		}
		req.Groups = append(req.Groups, g)
		return req
	}
	req.Group = group
	if topic != "" {
		t := kmsg.NewOffsetFetchRequestTopic()
		t.Topic, t.Partitions = topic, partitions
		req.Topics = append(req.Topics, t)
	}
	return req
}

// fetched is one partition of an OffsetFetch answer, whatever the version.
type fetched struct {
	offset   int64
	epoch    int32
	metadata *string
	code     int16
}

// fetchedOffsets flattens an OffsetFetch response of a single group: "topic/partition" → answer,
// and the group's error code.
func fetchedOffsets(resp *kmsg.OffsetFetchResponse) (map[string]fetched, int16) {
	out := map[string]fetched{}
	if resp.Version >= 8 {
		if len(resp.Groups) != 1 {
			return nil, -100
		}
		g := resp.Groups[0]
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				out[tp(t.Topic, p.Partition)] = fetched{p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode}
			}
		}
		return out, g.ErrorCode
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[tp(t.Topic, p.Partition)] = fetched{p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode}
		}
	}
	return out, resp.ErrorCode
}

// mkKafkaTopic creates an Iggy topic in the gateway's default stream.
func (g *gateway) mkKafkaTopic(name string, partitions uint32) {
	g.t.Helper()
	g.mkTopic(g.config.DefaultStream, name, partitions)
}
