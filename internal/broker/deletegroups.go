package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.DeleteGroups, route{
		serve: typed((*Broker).deleteGroups),
		// Errors are per group only: an undecodable request closes the connection.
	})
}

// deleteGroups deletes groups without members together with their committed offsets; the
// deletion is acknowledged once it is in the coordinator log. Without the bridge only the
// groups in memory exist.
func (b *Broker) deleteGroups(ctx context.Context, cc *listener.ConnContext, req *kmsg.DeleteGroupsRequest) (kmsg.Response, error) {
	served, refused := b.splitGroups(cc, req.Groups)
	if refused == nil {
		return b.groups.coordinator.DeleteGroups(ctx, req), nil
	}
	mine := *req
	mine.Groups = served
	resp := b.groups.coordinator.DeleteGroups(ctx, &mine)
	for g, err := range refused {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group, rg.ErrorCode = g, err.Code
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
