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
func (b *Broker) deleteGroups(ctx context.Context, _ *listener.ConnContext, req *kmsg.DeleteGroupsRequest) (kmsg.Response, error) {
	return b.groups.coordinator.DeleteGroups(ctx, req), nil
}
