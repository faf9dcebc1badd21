package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.ListGroups, route{
		serve:      typed((*Broker).listGroups),
		concurrent: true,
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// listGroups lists every group with members or stored offsets, with the state filter (v4+)
// and the type filter (v5+, every group here is "classic").
func (b *Broker) listGroups(_ context.Context, _ *listener.ConnContext, req *kmsg.ListGroupsRequest) (kmsg.Response, error) {
	return b.groups.coordinator.ListGroups(req), nil
}
