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
// (Empty), one at a time in request order: a group's members and their metadata can be many
// times the size of its name, so each group's answer is reserved from the request memory
// budget as it is built (docs/LIMITS.md). Authorized operations stay "not provided".
func (b *Broker) describeGroups(ctx context.Context, cc *listener.ConnContext, req *kmsg.DescribeGroupsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	one := *req
	for _, name := range req.Groups {
		g := kmsg.NewDescribeGroupsResponseGroup()
		g.Group = name
		if err := b.coordinatorError(cc, name); err != nil {
			g.ErrorCode = err.Code
		} else {
			one.Groups = []string{name}
			g = b.groups.coordinator.DescribeGroups(&one).Groups[0]
		}
		if err := listener.ReserveAnswer(ctx, g); err != nil {
			return nil, err
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}
