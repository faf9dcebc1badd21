package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.DescribeACLs, route{
		serve:      typed((*Broker).describeACLs),
		concurrent: true,
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// describeACLs answers an identified caller with its own Iggy permissions rendered as Kafka
// ACLs (internal/authorize). Anonymous connections have no per-user checks: SECURITY_DISABLED,
// as a Kafka broker without an authorizer answers (docs/SECURITY.md, "Permissions as ACLs").
func (b *Broker) describeACLs(ctx context.Context, cc *listener.ConnContext, req *kmsg.DescribeACLsRequest) (kmsg.Response, error) {
	id := cc.Identity()
	if !id.Authenticated() || b.access == nil {
		resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
		resp.ErrorCode = kerr.SecurityDisabled.Code
		resp.ErrorMessage = kmsg.StringPtr("this connection is not authenticated: it acts as the gateway's Iggy account without per-user checks, so there are no ACLs to describe (docs/SECURITY.md)")
		return resp, nil
	}
	return b.access.DescribeACLs(ctx, id.User, req)
}
