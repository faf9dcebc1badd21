package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.JoinGroup, route{
		serve:            typed((*Broker).joinGroup),
		abandonedOnClose: true,
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// joinGroup parks until the group's join barrier completes. Later requests on the same
// connection wait behind it, as on a Kafka broker (which mutes the connection until the
// answer is sent); clients send group requests on a connection of their own.
func (b *Broker) joinGroup(ctx context.Context, cc *listener.ConnContext, req *kmsg.JoinGroupRequest) (kmsg.Response, error) {
	if err := b.coordinatorError(cc, req.Group); err != nil {
		return groupRefusal(req, err), nil
	}
	ctx, cancel := b.rebalanceContext(ctx)
	defer cancel()
	return b.groups.coordinator.JoinGroup(ctx, groupClient(cc), req), nil
}
