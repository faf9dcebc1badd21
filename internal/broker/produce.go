package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	// No INVALID_REQUEST answer: with acks=0 the client reads no response, so an undecodable
	// Produce closes the connection. Pipelined: two Produce requests of one connection must
	// reach a partition in order, which the data plane's send lanes keep, so the next
	// request may be converted while this one's sends are in flight. The frame is reusable:
	// records are copied into the Iggy batches, sent before the handler returns.
	register(kmsg.Produce, route{serve: typed((*Broker).produce), pipelined: true, frameReusable: true})
}

// produce writes records through the data plane (docs/DATA-PATH.md).
func (b *Broker) produce(ctx context.Context, cc *listener.ConnContext, req *kmsg.ProduceRequest) (kmsg.Response, error) {
	return b.data.Produce(ctx, cc, req)
}
