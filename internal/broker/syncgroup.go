package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.SyncGroup, route{
		serve:            typed((*Broker).syncGroup),
		abandonedOnClose: true,
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// syncGroup parks a follower until the leader's assignments arrive (see joinGroup).
func (b *Broker) syncGroup(ctx context.Context, cc *listener.ConnContext, req *kmsg.SyncGroupRequest) (kmsg.Response, error) {
	if err := b.coordinatorError(cc, req.Group); err != nil {
		return groupRefusal(req, err), nil
	}
	ctx, cancel := b.rebalanceContext(ctx)
	defer cancel()
	return b.groups.coordinator.SyncGroup(ctx, req), nil
}
