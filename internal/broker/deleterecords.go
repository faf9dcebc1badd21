package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	// Errors are per partition only: an undecodable request closes the connection.
	register(kmsg.DeleteRecords, route{serve: typed((*Broker).deleteRecords)})
}

// deleteRecords raises log start offsets through the data plane (docs/TOPIC-CONFIGS.md).
func (b *Broker) deleteRecords(ctx context.Context, cc *listener.ConnContext, req *kmsg.DeleteRecordsRequest) (kmsg.Response, error) {
	return b.data.DeleteRecords(ctx, cc, req)
}
