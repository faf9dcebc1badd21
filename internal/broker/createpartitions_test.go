package broker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

func TestCreatePartitionsWithKadm(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "t", 2)
	_, adm := g.kafka()
	ctx := ctxT(t)
	// Resolve "t" so that the change must invalidate a cached partition count.
	if md := g.metadataOf("t"); len(md.Partitions) != 2 {
		t.Fatalf("metadata: error %d, %d partitions", md.ErrorCode, len(md.Partitions))
	}

	dry, err := adm.ValidateCreatePartitions(ctx, 2, "t")
	if err == nil {
		err = dry.Error()
	}
	if err != nil {
		t.Fatalf("validate-only add: %v", err)
	}
	if tp := g.iggyTopic("kafka", "t"); tp.PartitionsCount != 2 {
		t.Fatalf("validate-only add changed the topic to %d partitions", tp.PartitionsCount)
	}

	added, err := adm.CreatePartitions(ctx, 2, "t")
	if err == nil {
		err = added.Error()
	}
	if err != nil {
		t.Fatalf("add 2: %v", err)
	}
	if tp := g.iggyTopic("kafka", "t"); tp.PartitionsCount != 4 {
		t.Fatalf("after adding 2: %d partitions in Iggy", tp.PartitionsCount)
	}
	if md := g.metadataOf("t"); len(md.Partitions) != 4 {
		t.Errorf("metadata after adding: error %d, %d partitions", md.ErrorCode, len(md.Partitions))
	}

	for _, tc := range []struct {
		set     int
		topic   string
		want    error
		message string
	}{
		{4, "t", kerr.InvalidPartitions, "already has 4"},
		{3, "t", kerr.InvalidPartitions, "not be an increase"},
		{1001, "t", kerr.InvalidPartitions, "at most 1000"},
		{5, "missing", kerr.UnknownTopicOrPartition, "does not exist"},
	} {
		resp, err := adm.UpdatePartitions(ctx, tc.set, tc.topic)
		if err != nil {
			t.Fatal(err)
		}
		r := resp[tc.topic]
		if !errors.Is(r.Err, tc.want) || !strings.Contains(r.ErrMessage, tc.message) {
			t.Errorf("set %s to %d: %v %q, want %v mentioning %q", tc.topic, tc.set, r.Err, r.ErrMessage, tc.want, tc.message)
		}
	}
	if tp := g.iggyTopic("kafka", "t"); tp.PartitionsCount != 4 {
		t.Errorf("refused changes left %d partitions", tp.PartitionsCount)
	}
}

// Every version; manual assignments must name this gateway, one per new partition.
func TestCreatePartitionsAllVersions(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "t", 1)
	c := dialRaw(t, g.addr)
	count := int32(1)
	for v := int16(0); v <= 3; v++ {
		count++
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.Version = v
		req.TimeoutMillis = 5000
		req.Topics = []kmsg.CreatePartitionsRequestTopic{
			{Topic: "t", Count: count, Assignment: []kmsg.CreatePartitionsRequestTopicAssignment{{Replicas: []int32{1}}}},
			{Topic: "bad name", Count: 2},
		}
		resp := c.roundTrip(req).(*kmsg.CreatePartitionsResponse)
		if len(resp.Topics) != 2 || resp.Topics[0].Topic != "t" {
			t.Fatalf("v%d: %+v", v, resp.Topics)
		}
		wantCode(t, "add one", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, 0)
		wantCode(t, "bad name", resp.Topics[1].ErrorCode, resp.Topics[1].ErrorMessage, kerr.UnknownTopicOrPartition.Code)
		if tp := g.iggyTopic("kafka", "t"); int32(tp.PartitionsCount) != count {
			t.Errorf("v%d: %d partitions, want %d", v, tp.PartitionsCount, count)
		}
	}

	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version = 3
	one := []kmsg.CreatePartitionsRequestTopicAssignment{{Replicas: []int32{1}}}
	req.Topics = []kmsg.CreatePartitionsRequestTopic{
		{Topic: "t", Count: count + 2, Assignment: one},                                                                   // too few assignments
		{Topic: "t", Count: count + 1, Assignment: []kmsg.CreatePartitionsRequestTopicAssignment{{Replicas: []int32{7}}}}, // unknown broker
	}
	resp := c.roundTrip(req).(*kmsg.CreatePartitionsResponse)
	if len(resp.Topics) != 1 {
		t.Fatalf("a repeated topic got %d results: %+v", len(resp.Topics), resp.Topics)
	}
	wantCode(t, "repeated topic", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, kerr.InvalidRequest.Code)
	for _, tc := range []struct {
		assignment []kmsg.CreatePartitionsRequestTopicAssignment
		message    string
	}{
		{one, "add 2 partitions, but 1 assignments"},
		{[]kmsg.CreatePartitionsRequestTopicAssignment{{Replicas: []int32{7}}, {Replicas: []int32{1}}}, "broker 7"},
	} {
		req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: count + 2, Assignment: tc.assignment}}
		r := c.roundTrip(req).(*kmsg.CreatePartitionsResponse).Topics[0]
		wantCode(t, "assignment", r.ErrorCode, r.ErrorMessage, kerr.InvalidReplicaAssignment.Code)
		if r.ErrorMessage == nil || !strings.Contains(*r.ErrorMessage, tc.message) {
			t.Errorf("message %v, want it to mention %q", r.ErrorMessage, tc.message)
		}
	}
	if tp := g.iggyTopic("kafka", "t"); int32(tp.PartitionsCount) != count {
		t.Errorf("refused assignments changed the count to %d", tp.PartitionsCount)
	}
}

// Concurrent requests for the same total add partitions once: the others see the new count.
func TestCreatePartitionsConcurrent(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "t", 2)
	const n = 8
	codes := make(chan int16, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		c := dialRaw(t, g.addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := kmsg.NewPtrCreatePartitionsRequest()
			req.Version = 3
			req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: 4}}
			resp, err := c.exchange(req)
			if err != nil {
				t.Error(err)
				return
			}
			codes <- resp.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode
		}()
	}
	wg.Wait()
	close(codes)
	ok := 0
	for code := range codes {
		switch code {
		case 0:
			ok++
		case kerr.InvalidPartitions.Code:
		default:
			t.Errorf("code %d", code)
		}
	}
	if tp := g.iggyTopic("kafka", "t"); ok != 1 || tp.PartitionsCount != 4 {
		t.Errorf("%d requests succeeded, %d partitions; want 1 and 4", ok, tp.PartitionsCount)
	}
}

// holdingCreatePartitions holds Iggy's CreatePartitions for topic hold until release is closed,
// as a slow Iggy would; held is closed when the call arrives.
type holdingCreatePartitions struct {
	iggy.API
	hold    string
	held    chan struct{}
	release chan struct{}
}

func (h *holdingCreatePartitions) CreatePartitions(ctx context.Context, s, t iggy.Identifier, n uint32) error {
	if t.Name == h.hold {
		close(h.held)
		<-h.release
	}
	return h.API.CreatePartitions(ctx, s, t, n)
}

// CreatePartitions of one topic waiting on a slow Iggy does not hold up CreatePartitions of
// another topic (issue 25: one lock for all topic administration was held across the Iggy
// round trips).
func TestCreatePartitionsOfOtherTopicsNotStalled(t *testing.T) {
	h := &holdingCreatePartitions{hold: "slow", held: make(chan struct{}), release: make(chan struct{})}
	g := startGateway(t, gatewayOpts{bridge: true, wrap: func(api iggy.API) iggy.API { h.API = api; return h }})
	g.mkTopic("kafka", "slow", 1)
	g.mkTopic("kafka", "fast", 1)
	add := func(topic string) int16 {
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.Version, req.TimeoutMillis = 3, 10_000
		req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: topic, Count: 2}}
		resp, err := g.b.createPartitions(ctxT(t), dataConn, req)
		if err != nil {
			t.Error(err)
			return -1
		}
		return resp.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode
	}
	slow, fast := make(chan int16, 1), make(chan int16, 1)
	go func() { slow <- add("slow") }()
	<-h.held
	go func() { fast <- add("fast") }()
	stalled := false
	select {
	case code := <-fast:
		if code != 0 {
			t.Errorf("fast topic: code %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Error("CreatePartitions of another topic waited for the slow one")
		stalled = true
	}
	close(h.release)
	if code := <-slow; code != 0 {
		t.Errorf("slow topic: code %d", code)
	}
	if stalled { // answered once the slow one went on
		<-fast
	}
	for _, topic := range []string{"slow", "fast"} {
		if tp := g.iggyTopic("kafka", topic); tp.PartitionsCount != 2 {
			t.Errorf("%s: %d partitions", topic, tp.PartitionsCount)
		}
	}
}
