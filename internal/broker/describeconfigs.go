package broker

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

func init() {
	// Errors are per resource only: an undecodable request closes the connection. Concurrent:
	// describing changes nothing.
	register(kmsg.DescribeConfigs, route{serve: typed((*Broker).describeConfigs), concurrent: true})
}

// describeConfigs describes TOPIC resources (their retention, read from the Iggy topic, and
// the configs the gateway stores) and
// BROKER resources (this gateway's settings and topic defaults; the empty name, Kafka's
// cluster-wide default, gets the same answer since every gateway has the same defaults).
// Requested names the gateway does not know are left out, as Kafka does.
func (b *Broker) describeConfigs(ctx context.Context, cc *listener.ConnContext, req *kmsg.DescribeConfigsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		res := kmsg.NewDescribeConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		b.describeResource(ctx, cc, req, rr, &res)
		// A resource's configs are about 1000 times its request entry: the answer to many
		// resources grows inside the request memory budget (docs/LIMITS.md).
		if err := listener.ReserveAnswer(ctx, res); err != nil {
			return nil, err
		}
		resp.Resources = append(resp.Resources, res)
	}
	return resp, nil
}

// describeResource fills res with the configs of rr.
func (b *Broker) describeResource(ctx context.Context, cc *listener.ConnContext, req *kmsg.DescribeConfigsRequest, rr kmsg.DescribeConfigsRequestResource, res *kmsg.DescribeConfigsResponseResource) {
	entries, err := b.configsOf(ctx, cc, rr.ResourceType, rr.ResourceName)
	res.ErrorCode, res.ErrorMessage = err.fields()
	for _, e := range entries {
		if len(rr.ConfigNames) > 0 && !slices.Contains(rr.ConfigNames, e.name) {
			continue
		}
		res.Configs = append(res.Configs, e.describe(req.IncludeSynonyms, req.IncludeDocumentation))
	}
}

func (b *Broker) configsOf(ctx context.Context, cc *listener.ConnContext, typ kmsg.ConfigResourceType, name string) ([]configEntry, *apiError) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if err := b.adminRefusal(); err != nil {
			return nil, err
		}
		if err := topicmap.ValidateKafkaName(name); err != nil {
			return nil, newAPIError(kerr.InvalidTopicException, "%v", err)
		}
		t := b.topics.Map().Resolve(name)
		topic, err := b.storage(cc).GetTopic(ctx, iggy.Name(t.Stream), iggy.Name(t.Topic))
		if err != nil {
			return nil, b.logAdminError(cc, "describe configs", name, err)
		}
		st, aerr := b.topicState(ctx, name, topic.ID, true)
		if aerr != nil {
			return nil, aerr
		}
		flush := durability.Of(topic)
		b.warnWeakFlush(name, flush)
		return b.withFlushEntries(b.topicEntries(topic, st.Configs), flush), nil
	case kmsg.ConfigResourceTypeBroker:
		if err := b.checkBrokerName(name); err != nil {
			return nil, err
		}
		return b.brokerConfigEntries(), nil
	default:
		return nil, unsupportedResource(typ)
	}
}

func unsupportedResource(typ kmsg.ConfigResourceType) *apiError {
	return newAPIError(kerr.InvalidRequest, "resource type %v is not supported by this gateway (TOPIC and BROKER are)", typ)
}

// describe renders e for a DescribeConfigs response.
func (e configEntry) describe(synonyms, documentation bool) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	c.Name, c.Value, c.ReadOnly, c.Source, c.ConfigType = e.name, kmsg.StringPtr(e.value), e.readOnly, e.source, e.typ
	if synonyms {
		for _, s := range e.synonyms {
			cs := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			cs.Name, cs.Value, cs.Source = s.name, kmsg.StringPtr(s.value), s.source
			c.ConfigSynonyms = append(c.ConfigSynonyms, cs)
		}
	}
	if documentation {
		c.Documentation = kmsg.StringPtr(e.doc)
	}
	return c
}
