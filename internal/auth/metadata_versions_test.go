package auth_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// metadataAt is a tenant's client whose Metadata requests go at version v at most, as an old
// client (or librdkafka and Java negotiating down) sends them.
func metadataAt(g *secureGateway, tn *tenant, v int16) *kgo.Client {
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(kmsg.Metadata.Int16(), v)
	return g.kafka("SASL_PLAINTEXT", plainAuth(tn.name, tn.name+"-secret"), kgo.MaxVersions(versions), kgo.RetryTimeout(time.Second))
}

// Old Metadata versions see only what the caller may describe and create nothing the caller
// may not create, as the current ones: a v0 request with an empty topic list (all topics at v0)
// lists only the tenant's own topic, and v0–v3 (which always allow auto-creation) do not
// create a topic for a tenant without create rights, even with auto-creation on.
func TestOldMetadataVersionsKeepTheBoundary(t *testing.T) {
	g, carol, _ := startTenants(t, "IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED=true")
	ctx := ctxT(t)

	all := kmsg.NewPtrMetadataRequest()
	all.Topics = []kmsg.MetadataRequestTopic{} // empty, not null: "all topics" at v0
	resp, err := all.RequestWith(ctx, metadataAt(g, carol, 0))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tp := range resp.Topics {
		names = append(names, *tp.Topic)
	}
	if resp.Version != 0 || !slices.Equal(names, []string{carol.topic}) {
		t.Errorf("Metadata v%d for all topics: %v, want only %s", resp.Version, names, carol.topic)
	}

	for _, v := range []int16{0, 1, 2, 3, 4} {
		topic := fmt.Sprintf("carol-auto-v%d", v)
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = true
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, metadataAt(g, carol, v))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != v || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode == 0 {
			t.Errorf("Metadata v%d naming a new topic: %+v, want an error", resp.Version, resp.Topics)
		}
		if _, err := g.iggy.GetTopic(ctx, iggy.Name("kafka"), iggy.Name(topic)); err == nil {
			t.Errorf("Metadata v%d created %s for a tenant without create rights", v, topic)
		} else if !iggy.IsCode(err, iggy.CodeTopicNameNotFound) {
			t.Fatal(err)
		}
	}
}
