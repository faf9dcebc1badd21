package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	// No top-level error field to answer an undecodable request with: it closes the
	// connection.
	register(kmsg.OffsetForLeaderEpoch, route{serve: typed((*Broker).offsetsForLeaderEpoch), concurrent: true})
}

// offsetsForLeaderEpoch answers from the data plane's leader epochs (docs/DATA-PATH.md).
func (b *Broker) offsetsForLeaderEpoch(ctx context.Context, cc *listener.ConnContext, req *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error) {
	return b.data.OffsetsForLeaderEpoch(ctx, cc, req)
}
