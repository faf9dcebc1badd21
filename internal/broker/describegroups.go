package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.DescribeGroups, route{
		serve:      typed((*Broker).describeGroups),
		concurrent: true,
		// No request-level error field: an undecodable request closes the connection.
	})
}

// describeGroups reports groups with members and groups known only from stored offsets
// (Empty). Authorized operations stay "not provided": the gateway has no Kafka ACLs.
func (b *Broker) describeGroups(_ context.Context, cc *listener.ConnContext, req *kmsg.DescribeGroupsRequest) (kmsg.Response, error) {
	served, refused := b.splitGroups(cc, req.Groups)
	if refused == nil {
		return b.groups.coordinator.DescribeGroups(req), nil
	}
	mine := *req
	mine.Groups = served
	resp := b.groups.coordinator.DescribeGroups(&mine)
	for g, err := range refused {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group, rg.ErrorCode = g, err.Code
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
