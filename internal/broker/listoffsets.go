package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	// No top-level error field to answer an undecodable request with: it closes the
	// connection.
	register(kmsg.ListOffsets, route{serve: typed((*Broker).listOffsets), concurrent: true})
}

// listOffsets answers from the data plane (docs/DATA-PATH.md).
func (b *Broker) listOffsets(ctx context.Context, cc *listener.ConnContext, req *kmsg.ListOffsetsRequest) (kmsg.Response, error) {
	return b.data.ListOffsets(ctx, cc, req)
}
