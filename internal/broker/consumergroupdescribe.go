package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.ConsumerGroupDescribe, route{
		serve:      typed((*Broker).consumerGroupDescribe),
		concurrent: true,
		// No request-level error field: an undecodable request closes the connection.
	})
}

// consumerGroupDescribe describes consumer-protocol groups one at a time, each answer
// reserved from the request memory budget as it is built (docs/LIMITS.md); classic groups
// are GROUP_ID_NOT_FOUND, as in Kafka. Authorized operations stay "not provided".
func (b *Broker) consumerGroupDescribe(ctx context.Context, cc *listener.ConnContext, req *kmsg.ConsumerGroupDescribeRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	one := *req
	for _, name := range req.Groups {
		g := kmsg.NewConsumerGroupDescribeResponseGroup()
		g.Group = name
		if err := b.coordinatorError(cc, name); err != nil {
			g.ErrorCode = err.Code
		} else {
			one.Groups = []string{name}
			g = b.groups.coordinator.ConsumerGroupDescribe(&one).Groups[0]
		}
		if err := listener.ReserveAnswer(ctx, g); err != nil {
			return nil, err
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}
