package auth_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A topic looked up by id (consumer-protocol clients do it for their assignments) is authorized
// by its name once found: a tenant gets its own topic, and for another tenant's topic
// TOPIC_AUTHORIZATION_FAILED with neither name nor partitions.
func TestMetadataByTopicIDKeepsTheBoundary(t *testing.T) {
	_, carol, dave := startTenants(t)
	ctx := ctxT(t)
	idOf := func(tn *tenant) [16]byte {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(tn.topic)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, tn.cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || resp.Topics[0].TopicID == ([16]byte{}) {
			t.Fatalf("%s's metadata: %+v", tn.name, resp.Topics)
		}
		return resp.Topics[0].TopicID
	}
	own, other := idOf(carol), idOf(dave)
	req := kmsg.NewPtrMetadataRequest()
	for _, id := range [][16]byte{own, other} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID = id
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, carol.cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 2 {
		t.Fatalf("answered %d topics", len(resp.Topics))
	}
	if mine := resp.Topics[0]; mine.ErrorCode != 0 || mine.Topic == nil || *mine.Topic != carol.topic || len(mine.Partitions) != 2 {
		t.Errorf("own topic by id: %+v", mine)
	}
	if theirs := resp.Topics[1]; theirs.ErrorCode != kerr.TopicAuthorizationFailed.Code || theirs.Topic != nil || len(theirs.Partitions) != 0 {
		t.Errorf("another tenant's topic by id: %+v", theirs)
	}
}
