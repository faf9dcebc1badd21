package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.LeaveGroup, route{
		serve: typed((*Broker).leaveGroup),
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// leaveGroup serves the single-member form (v0-2) and the batch form (v3+, also used by
// admin tools to remove static members).
func (b *Broker) leaveGroup(_ context.Context, cc *listener.ConnContext, req *kmsg.LeaveGroupRequest) (kmsg.Response, error) {
	if err := b.coordinatorError(cc, req.Group); err != nil {
		return groupRefusal(req, err), nil
	}
	return b.groups.coordinator.LeaveGroup(req), nil
}
