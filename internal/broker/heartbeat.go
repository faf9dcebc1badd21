package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.Heartbeat, route{
		serve: typed((*Broker).heartbeat),
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

func (b *Broker) heartbeat(_ context.Context, cc *listener.ConnContext, req *kmsg.HeartbeatRequest) (kmsg.Response, error) {
	if err := b.coordinatorError(cc, req.Group); err != nil {
		return groupRefusal(req, err), nil
	}
	return b.groups.coordinator.Heartbeat(req), nil
}
