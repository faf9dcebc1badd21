package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.DescribeCluster, route{
		serve:      typed((*Broker).describeCluster),
		concurrent: true,
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// endpointTypeBroker is DescribeCluster v1's "describe brokers" (2 asks for controllers, which
// a gateway does not have: KIP-919 says MISMATCHED_ENDPOINT_TYPE).
const endpointTypeBroker = 1

func (b *Broker) describeCluster(_ context.Context, cc *listener.ConnContext, req *kmsg.DescribeClusterRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	if req.Version >= 1 {
		resp.EndpointType = req.EndpointType
		if req.EndpointType != endpointTypeBroker {
			resp.ErrorCode = kerr.MismatchedEndpointType.Code
			return resp, nil
		}
	}
	resp.ClusterID = b.clusterID
	resp.ControllerID = b.placement.Controller()
	for _, n := range b.placement.Brokers(cc.Listener) {
		br := kmsg.NewDescribeClusterResponseBroker()
		br.NodeID, br.Host, br.Port = n.ID, n.Host, n.Port
		resp.Brokers = append(resp.Brokers, br)
	}
	return resp, nil
}
