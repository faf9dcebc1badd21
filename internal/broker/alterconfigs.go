package broker

import (
	"context"
	"maps"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

func init() {
	// Errors are per resource only: an undecodable request closes the connection.
	register(kmsg.AlterConfigs, route{serve: typed((*Broker).alterConfigs)})
}

// alterConfigs is the legacy, non-incremental AlterConfigs: like Kafka, it replaces the whole
// set of a topic's configs, so a setting not named in the request goes back to its default.
// (The upstream gateway patches instead; Kafka's semantics are what legacy clients such as
// sarama and kafka-go expect.)
func (b *Broker) alterConfigs(ctx context.Context, cc *listener.ConnContext, req *kmsg.AlterConfigsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	key := func(i int) string {
		return configResourceKey(req.Resources[i].ResourceType, req.Resources[i].ResourceName)
	}
	reps := findRepeats(len(req.Resources), key)
	for i := range req.Resources {
		rr := &req.Resources[i]
		var err *apiError
		switch reps.of(key(i)) {
		case laterRepeat:
			continue
		case firstRepeat:
			err = newAPIError(kerr.InvalidRequest, "the resource appears more than once in the request")
		default:
			err = b.alterLegacy(ctx, cc, rr, req.ValidateOnly)
		}
		res := kmsg.NewAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		res.ErrorCode, res.ErrorMessage = err.fields()
		resp.Resources = append(resp.Resources, res)
	}
	return resp, nil
}

func (b *Broker) alterLegacy(ctx context.Context, cc *listener.ConnContext, rr *kmsg.AlterConfigsRequestResource, validateOnly bool) *apiError {
	if err := b.refuseAlter(rr.ResourceType, rr.ResourceName); err != nil {
		return err
	}
	var nulls []string
	for _, c := range rr.Configs {
		if c.Value == nil {
			nulls = append(nulls, c.Name)
		}
	}
	if len(nulls) > 0 {
		return newAPIError(kerr.InvalidConfig, "null value not supported for topic configs: %s", strings.Join(nulls, ","))
	}
	var change topicChange
	change.resetAll()
	for _, c := range rr.Configs {
		if err := change.set(c.Name, *c.Value); err != nil {
			return err
		}
	}
	return b.alterTopic(ctx, cc, rr.ResourceName, &change, validateOnly)
}

// configResourceKey identifies a config resource for finding repeats.
func configResourceKey(typ kmsg.ConfigResourceType, name string) string {
	return strconv.Itoa(int(typ)) + "/" + name
}

// refuseAlter answers the config changes the gateway does not make: of BROKER configs (they
// are the gateway's settings), of resource types other than TOPIC, and of any topic when the
// gateway runs without the bridge. nil means the topic's configs may be changed.
func (b *Broker) refuseAlter(typ kmsg.ConfigResourceType, name string) *apiError {
	switch typ {
	case kmsg.ConfigResourceTypeBroker:
		if err := b.checkBrokerName(name); err != nil {
			return err
		}
		return newAPIError(kerr.InvalidConfig, "broker configs cannot be changed through Kafka: they come from the gateway's IGGY_KAFKA_* settings")
	case kmsg.ConfigResourceTypeTopic:
		return b.controllerRefusal()
	default:
		return unsupportedResource(typ)
	}
}

// alterTopic applies change to a Kafka topic: the retention to the Iggy topic, the other
// configs to the gateway's topic state. Every check runs first, against the topic's current
// configs; validateOnly stops there. The caller has checked adminRefusal.
func (b *Broker) alterTopic(ctx context.Context, cc *listener.ConnContext, name string, change *topicChange, validateOnly bool) *apiError {
	if name == "" {
		return newAPIError(kerr.InvalidRequest, "default topic resources (an empty topic name) are not supported")
	}
	if err := topicmap.ValidateKafkaName(name); err != nil {
		return newAPIError(kerr.InvalidTopicException, "%v", err)
	}
	t := b.topics.Map().Resolve(name)
	topic, err := b.storage(cc).GetTopic(ctx, iggy.Name(t.Stream), iggy.Name(t.Topic))
	if err != nil {
		return b.logAdminError(cc, "alter configs", name, err)
	}
	st, aerr := b.topicState(ctx, name, topic.ID, true)
	if aerr != nil {
		return aerr
	}
	stored := change.stored.apply(st.Configs)
	if aerr := checkCombination(change.apply(retentionOf(topic)), stored); aerr != nil {
		return aerr
	}
	if validateOnly {
		return nil
	}
	if !change.retentionChange.empty() {
		// Passing the Iggy name saves UpdateTopic a lookup; options left at 0 are unchanged.
		if err := b.storage(cc).UpdateTopic(ctx, iggy.Name(t.Stream), iggy.Name(t.Topic), t.Topic, change.options()); err != nil {
			return b.logAdminError(cc, "alter configs", name, err)
		}
	}
	if !change.stored.empty() && !maps.Equal(stored, st.Configs) {
		if aerr := b.saveStoredConfigs(ctx, name, topic.ID, stored); aerr != nil {
			return aerr
		}
	}
	opts := change.options() // 0: unchanged
	b.log.Info("altered topic configs", "conn", cc.ID, "topic", name, "message_expiry_us", opts.MessageExpiry, "max_topic_size", opts.MaxTopicSize, "stored", stored)
	return nil
}
