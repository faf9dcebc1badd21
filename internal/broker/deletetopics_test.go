package broker

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

func TestDeleteTopicsWithKadm(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "a", 2)
	g.mkTopic("kafka", "b", 1)
	_, adm := g.kafka()
	ctx := ctxT(t)
	// Resolve "a" first so that the deletion has a cached resolution to forget.
	if md := g.metadataOf("a"); md.ErrorCode != 0 {
		t.Fatalf("metadata: error %d", md.ErrorCode)
	}
	resp, err := adm.DeleteTopics(ctx, "a", "missing")
	if err != nil {
		t.Fatal(err)
	}
	if err := resp["a"].Err; err != nil {
		t.Errorf("delete a: %v", err)
	}
	if err := resp["missing"].Err; !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("delete missing: %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
	if g.iggyTopic("kafka", "a") != nil {
		t.Error("a still exists in Iggy")
	}
	if g.iggyTopic("kafka", "b") == nil {
		t.Error("b was deleted too")
	}
	if _, err := g.iggy.GetStream(ctx, iggy.Name("kafka")); err != nil {
		t.Errorf("the stream is gone: %v", err)
	}
	if md := g.metadataOf("a"); md.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("metadata after delete: error %d, %d partitions", md.ErrorCode, len(md.Partitions))
	}
	// Created again through Kafka, it is a fresh topic.
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "a"); err != nil {
		t.Fatal(err)
	}
	if md := g.metadataOf("a"); md.ErrorCode != 0 || len(md.Partitions) != 3 {
		t.Errorf("metadata after re-create: error %d, %d partitions", md.ErrorCode, len(md.Partitions))
	}
}

// Every version: names before v6, name-or-id entries from v6; ids are unknown to the gateway.
func TestDeleteTopicsAllVersions(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	c := dialRaw(t, g.addr)
	for v := int16(1); v <= 6; v++ {
		name := "t" + string(rune('0'+v))
		g.mkTopic("kafka", name, 1)
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version = v
		req.TimeoutMillis = 5000
		if v < 6 {
			req.TopicNames = []string{name, "bad name"}
		} else {
			req.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: &name}, {Topic: kmsg.StringPtr("bad name")}}
		}
		resp := c.roundTrip(req).(*kmsg.DeleteTopicsResponse)
		if len(resp.Topics) != 2 || resp.Topics[0].Topic == nil || *resp.Topics[0].Topic != name {
			t.Fatalf("v%d: %+v", v, resp.Topics)
		}
		wantCode(t, "delete", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, 0)
		wantCode(t, "delete bad name", resp.Topics[1].ErrorCode, resp.Topics[1].ErrorMessage, kerr.UnknownTopicOrPartition.Code)
		if v >= 5 && resp.Topics[1].ErrorMessage == nil {
			t.Errorf("v%d: no error message", v)
		}
		if g.iggyTopic("kafka", name) != nil {
			t.Errorf("v%d: %s not deleted", v, name)
		}
	}

	g.mkTopic("kafka", "keep", 1)
	id := [16]byte{1, 2, 3}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.Topics = []kmsg.DeleteTopicsRequestTopic{
		{TopicID: id}, // by id
		{},            // neither
		{Topic: kmsg.StringPtr("keep"), TopicID: id}, // both
		{Topic: kmsg.StringPtr("twice")},             // repeated
		{Topic: kmsg.StringPtr("twice")},
	}
	resp := c.roundTrip(req).(*kmsg.DeleteTopicsResponse)
	if len(resp.Topics) != 4 {
		t.Fatalf("%d results, want 4 (one per repeated name): %+v", len(resp.Topics), resp.Topics)
	}
	for i, want := range []int16{kerr.UnknownTopicID.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code} {
		wantCode(t, "v6 entry", resp.Topics[i].ErrorCode, resp.Topics[i].ErrorMessage, want)
	}
	if resp.Topics[0].TopicID != id {
		t.Errorf("topic id not echoed: %v", resp.Topics[0].TopicID)
	}
	if g.iggyTopic("kafka", "keep") == nil {
		t.Error("an entry with both name and id deleted the topic")
	}
}
