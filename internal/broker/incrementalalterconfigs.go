package broker

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/kafkareq"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	// Errors are per resource only: an undecodable request closes the connection.
	register(kmsg.IncrementalAlterConfigs, route{serve: typed((*Broker).incrementalAlterConfigs)})
}

// incrementalAlterConfigs applies SET and DELETE (back to the default) to the named topic
// configs and leaves the others alone; APPEND and SUBTRACT are refused (SET a whole list
// instead). Each resource's changes are checked completely, then made: the retention in one
// Iggy update, the stored configs in one topic-state record.
func (b *Broker) incrementalAlterConfigs(ctx context.Context, cc *listener.ConnContext, req *kmsg.IncrementalAlterConfigsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	dup := kafkareq.Repeated(len(req.Resources), func(i int) string {
		return configResourceKey(req.Resources[i].ResourceType, req.Resources[i].ResourceName)
	})
	for i := range req.Resources {
		rr := &req.Resources[i]
		var err *apiError
		if dup[configResourceKey(rr.ResourceType, rr.ResourceName)] {
			// Kafka answers every occurrence of a repeated resource.
			err = newAPIError(kerr.InvalidRequest, "each resource must appear at most once")
		} else {
			err = b.alterIncremental(ctx, cc, rr, req.ValidateOnly)
		}
		res := kmsg.NewIncrementalAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		res.ErrorCode, res.ErrorMessage = err.fields()
		resp.Resources = append(resp.Resources, res)
	}
	return resp, nil
}

func (b *Broker) alterIncremental(ctx context.Context, cc *listener.ConnContext, rr *kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) *apiError {
	if kafkareq.Repeated(len(rr.Configs), func(i int) string { return rr.Configs[i].Name }) != nil {
		return newAPIError(kerr.InvalidRequest, "a config appears more than once for the resource")
	}
	var nulls []string
	for _, c := range rr.Configs {
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if c.Value == nil {
				nulls = append(nulls, c.Name)
			}
		case kmsg.IncrementalAlterConfigOpDelete:
		default:
			return newAPIError(kerr.InvalidRequest, "unknown config operation %d for %s", int8(c.Op), c.Name)
		}
	}
	if len(nulls) > 0 {
		return newAPIError(kerr.InvalidRequest, "null value not supported for: %s", strings.Join(nulls, ", "))
	}
	if err := b.refuseAlter(rr.ResourceType, rr.ResourceName); err != nil {
		return err
	}
	var change topicChange
	for _, c := range rr.Configs {
		var err *apiError
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			err = change.set(c.Name, *c.Value)
		case kmsg.IncrementalAlterConfigOpDelete:
			err = change.reset(c.Name)
		default: // APPEND, SUBTRACT
			if isSettable(c.Name) {
				err = newAPIError(kerr.InvalidConfig, "cannot %v %s: the gateway supports SET and DELETE only", c.Op, c.Name)
			} else {
				err = refuseConfig(c.Name)
			}
		}
		if err != nil {
			return err
		}
	}
	return b.alterTopic(ctx, cc, rr.ResourceName, &change, validateOnly)
}
