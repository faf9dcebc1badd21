package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A gateway whose config write was superseded by a newer controller's (topic-state records of
// a higher controller epoch, docs/TOPIC-CONFIGS.md) answers NOT_CONTROLLER, which admin clients
// retry at the controller, rather than REQUEST_TIMED_OUT.
func TestSupersededControllerAnswersNotController(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	_, adm := g.kafka()
	ctx := ctxT(t)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "fenced"); err != nil {
		t.Fatal(err)
	}
	newer := loadTopicState(t, g.iggy)
	newer.SetControllerEpoch(func() uint64 { return 5 })
	if err := newer.SetConfigs(ctx, "elsewhere", 1, map[string]string{"cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	stale := loadTopicState(t, g.iggy)
	stale.SetControllerEpoch(func() uint64 { return 4 })
	b, err := New(Options{Config: g.config, Iggy: g.iggy, Logger: testLogger(t), ClusterID: ClusterID("test"), TopicState: stale})
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "fenced"
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = "cleanup.policy", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("compact")
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := b.incrementalAlterConfigs(ctx, nil, req)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode; code != kerr.NotController.Code {
		t.Fatalf("error code %d, want NOT_CONTROLLER (%d)", code, kerr.NotController.Code)
	}
}
