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
func (b *Broker) describeGroups(_ context.Context, _ *listener.ConnContext, req *kmsg.DescribeGroupsRequest) (kmsg.Response, error) {
	return b.groups.coordinator.DescribeGroups(req), nil
}
