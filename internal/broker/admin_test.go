package broker

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// iggyTopic reads a topic straight from Iggy; nil when it does not exist.
func (g *gateway) iggyTopic(stream, topic string) *iggy.Topic {
	g.t.Helper()
	tp, err := g.iggy.GetTopic(context.Background(), iggy.Name(stream), iggy.Name(topic))
	if kafkacode.IsNotFound(err) {
		return nil
	}
	if err != nil {
		g.t.Fatal(err)
	}
	return tp
}

// metadataOf asks the gateway for one topic's metadata on a fresh connection (franz-go's
// clients may answer Metadata requests from their own cache).
func (g *gateway) metadataOf(topic string) kmsg.MetadataResponseTopic {
	g.t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	return dialRaw(g.t, g.addr).roundTrip(req).(*kmsg.MetadataResponse).Topics[0]
}

// wantCode fails t unless code is want (message describes where).
func wantCode(t *testing.T, what string, code int16, msg *string, want int16) {
	t.Helper()
	if code != want {
		m := "<nil>"
		if msg != nil {
			m = *msg
		}
		t.Errorf("%s: error %d (%v) %q, want %d (%v)", what, code, kerr.ErrorForCode(code), m, want, kerr.ErrorForCode(want))
	}
}

// Without the bridge every topic administration and topic config request is refused with
// NOT_CONTROLLER per topic or resource (docs/DATA-PATH.md); broker configs are still described.
func TestAdminWithoutBridge(t *testing.T) {
	g := startGateway(t, gatewayOpts{})
	c := dialRaw(t, g.addr)
	notController := kerr.NotController.Code

	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version = 7
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "t", 1, 1
	ct.Topics = append(ct.Topics, rt)
	for _, r := range c.roundTrip(ct).(*kmsg.CreateTopicsResponse).Topics {
		wantCode(t, "CreateTopics", r.ErrorCode, r.ErrorMessage, notController)
	}

	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.Version = 6
	dt.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr("t")}}
	for _, r := range c.roundTrip(dt).(*kmsg.DeleteTopicsResponse).Topics {
		wantCode(t, "DeleteTopics", r.ErrorCode, r.ErrorMessage, notController)
	}

	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Version = 3
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: 3}}
	for _, r := range c.roundTrip(cp).(*kmsg.CreatePartitionsResponse).Topics {
		wantCode(t, "CreatePartitions", r.ErrorCode, r.ErrorMessage, notController)
	}

	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.Version = 4
	dc.Resources = []kmsg.DescribeConfigsRequestResource{
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t"},
		{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "1"},
	}
	res := c.roundTrip(dc).(*kmsg.DescribeConfigsResponse).Resources
	wantCode(t, "DescribeConfigs topic", res[0].ErrorCode, res[0].ErrorMessage, notController)
	wantCode(t, "DescribeConfigs broker", res[1].ErrorCode, res[1].ErrorMessage, 0)
	if len(res[1].Configs) == 0 {
		t.Error("broker configs are not described without the bridge")
	}

	ac := kmsg.NewPtrAlterConfigsRequest()
	ac.Version = 2
	ac.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t",
		Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("1000")}}}}
	for _, r := range c.roundTrip(ac).(*kmsg.AlterConfigsResponse).Resources {
		wantCode(t, "AlterConfigs", r.ErrorCode, r.ErrorMessage, notController)
	}

	ic := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ic.Version = 1
	ic.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t",
		Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("1000")}}}}
	for _, r := range c.roundTrip(ic).(*kmsg.IncrementalAlterConfigsResponse).Resources {
		wantCode(t, "IncrementalAlterConfigs", r.ErrorCode, r.ErrorMessage, notController)
	}

	// The refusal comes before any check of the topic or its configs.
	ct.Topics[0].Topic, ct.Topics[0].NumPartitions = "bad name", 0
	r := c.roundTrip(ct).(*kmsg.CreateTopicsResponse).Topics[0]
	wantCode(t, "CreateTopics, invalid", r.ErrorCode, r.ErrorMessage, notController)
	ac.Resources[0].Configs[0].Name = "segment.bytes"
	a := c.roundTrip(ac).(*kmsg.AlterConfigsResponse).Resources[0]
	wantCode(t, "AlterConfigs, invalid", a.ErrorCode, a.ErrorMessage, notController)
	ic.Resources[0].Configs[0].Name = "segment.bytes"
	i := c.roundTrip(ic).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
	wantCode(t, "IncrementalAlterConfigs, invalid", i.ErrorCode, i.ErrorMessage, notController)
}

// faultyIggy makes chosen calls fail with a chosen error.
type faultyIggy struct {
	iggy.API
	mu   sync.Mutex
	fail map[string]error // by method name
}

func (f *faultyIggy) err(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fail[method]
}

func (f *faultyIggy) set(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[method] = err
}

func (f *faultyIggy) CreateTopic(ctx context.Context, s iggy.Identifier, name string, n uint32, o iggy.TopicOptions) (*iggy.Topic, error) {
	if err := f.err("CreateTopic"); err != nil {
		return nil, err
	}
	return f.API.CreateTopic(ctx, s, name, n, o)
}

func (f *faultyIggy) DeleteTopic(ctx context.Context, s, t iggy.Identifier) error {
	if err := f.err("DeleteTopic"); err != nil {
		return err
	}
	return f.API.DeleteTopic(ctx, s, t)
}

func (f *faultyIggy) UpdateTopic(ctx context.Context, s, t iggy.Identifier, name string, o iggy.TopicOptions) error {
	if err := f.err("UpdateTopic"); err != nil {
		return err
	}
	return f.API.UpdateTopic(ctx, s, t, name, o)
}

func (f *faultyIggy) CreatePartitions(ctx context.Context, s, t iggy.Identifier, n uint32) error {
	if err := f.err("CreatePartitions"); err != nil {
		return err
	}
	return f.API.CreatePartitions(ctx, s, t, n)
}

// Iggy's refusals and failures map to the Kafka codes of SPEC and the upstream gateway.
func TestAdminIggyErrors(t *testing.T) {
	f := &faultyIggy{fail: map[string]error{}}
	g := startGateway(t, gatewayOpts{bridge: true, wrap: func(api iggy.API) iggy.API { f.API = api; return f }})
	g.mkTopic("kafka", "t", 1)
	c := dialRaw(t, g.addr)
	connErr := &iggy.ConnError{Op: "test", Err: errors.New("reset"), Sent: true}
	for _, tc := range []struct {
		err  error
		want int16
	}{
		{&iggy.Error{Code: iggy.CodeUnauthorized}, kerr.TopicAuthorizationFailed.Code},
		{&iggy.Error{Code: iggy.CodeInvalidTopicSize}, kerr.InvalidConfig.Code},
		{&iggy.Error{Code: iggy.CodeTooManyPartitions}, kerr.InvalidPartitions.Code},
		{&iggy.Error{Code: iggy.CodeTopicNameNotFound}, kerr.UnknownTopicOrPartition.Code},
		{connErr, kerr.RequestTimedOut.Code},
		{context.DeadlineExceeded, kerr.RequestTimedOut.Code},
		{&iggy.Error{Code: iggy.CodeError}, kerr.UnknownServerError.Code},
	} {
		for _, m := range []string{"CreateTopic", "DeleteTopic", "UpdateTopic", "CreatePartitions"} {
			f.set(m, tc.err)
		}
		ct := kmsg.NewPtrCreateTopicsRequest()
		ct.Version = 7
		ct.Topics = []kmsg.CreateTopicsRequestTopic{{Topic: "new", NumPartitions: 1, ReplicationFactor: 1}}
		r := c.roundTrip(ct).(*kmsg.CreateTopicsResponse).Topics[0]
		wantCode(t, "create with "+tc.err.Error(), r.ErrorCode, r.ErrorMessage, tc.want)

		dt := kmsg.NewPtrDeleteTopicsRequest()
		dt.Version = 5
		dt.TopicNames = []string{"t"}
		d := c.roundTrip(dt).(*kmsg.DeleteTopicsResponse).Topics[0]
		wantCode(t, "delete with "+tc.err.Error(), d.ErrorCode, d.ErrorMessage, tc.want)

		cp := kmsg.NewPtrCreatePartitionsRequest()
		cp.Version = 3
		cp.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: 2}}
		p := c.roundTrip(cp).(*kmsg.CreatePartitionsResponse).Topics[0]
		wantCode(t, "create partitions with "+tc.err.Error(), p.ErrorCode, p.ErrorMessage, tc.want)

		ic := kmsg.NewPtrIncrementalAlterConfigsRequest()
		ic.Version = 1
		ic.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t",
			Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("1000")}}}}
		a := c.roundTrip(ic).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
		wantCode(t, "alter with "+tc.err.Error(), a.ErrorCode, a.ErrorMessage, tc.want)
	}
	if g.iggyTopic("kafka", "t") == nil {
		t.Fatal("a failed delete deleted the topic")
	}
}

// The topic map never resolves a Kafka name to the gateway's own stream, so no admin request
// can touch it, whatever the name.
func TestAdminNeverTouchesInternalStream(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic(topicmap.InternalStream, topicmap.InternalStream, 1)
	g.mkTopic(topicmap.InternalStream, "offsets", 1)
	_, adm := g.kafka()
	ctx := ctxT(t)
	for _, name := range []string{topicmap.InternalStream, "offsets"} {
		resp, err := adm.DeleteTopics(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := resp[name].Err; !errors.Is(err, kerr.UnknownTopicOrPartition) {
			t.Errorf("delete %s: %v, want UNKNOWN_TOPIC_OR_PARTITION", name, err)
		}
		if g.iggyTopic(topicmap.InternalStream, name) == nil {
			t.Errorf("internal topic %s deleted", name)
		}
	}
}

// The first occurrence of a repeated entry is answered (with INVALID_REQUEST), later ones are
// left out, and entries named once are answered on their merits.
func TestRepeats(t *testing.T) {
	keys := []string{"a", "b", "a", "c", "a", "b"}
	want := []occurrence{firstRepeat, firstRepeat, laterRepeat, onlyOccurrence, laterRepeat, laterRepeat}
	reps := findRepeats(len(keys), func(i int) string { return keys[i] })
	for i, k := range keys {
		if got := reps.of(k); got != want[i] {
			t.Errorf("entry %d (%s): occurrence %d, want %d", i, k, got, want[i])
		}
	}
}
