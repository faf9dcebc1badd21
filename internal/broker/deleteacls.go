package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.DeleteACLs, route{
		serve:      typed((*Broker).deleteACLs),
		concurrent: true,
		// Errors are per filter only: an undecodable request closes the connection.
	})
}

// deleteACLs refuses every filter with the same message as createACLs.
func (b *Broker) deleteACLs(_ context.Context, _ *listener.ConnContext, req *kmsg.DeleteACLsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	for range req.Filters {
		r := kmsg.NewDeleteACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(aclsLiveInIggy)
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}
