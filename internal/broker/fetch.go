package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	// Concurrent: a Fetch changes nothing, so consecutive fetches of a connection may wait
	// together; a later Produce still waits for them (and a Fetch after a Produce sees it).
	register(kmsg.Fetch, route{
		serve:            typed((*Broker).fetch),
		concurrent:       true,
		abandonedOnClose: true,
		invalid: func(req kmsg.Request) kmsg.Response {
			if req.GetVersion() < 7 {
				return nil // no top-level error field before v7: close
			}
			resp := req.ResponseKind().(*kmsg.FetchResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// fetch reads records through the data plane (docs/DATA-PATH.md).
func (b *Broker) fetch(ctx context.Context, cc *listener.ConnContext, req *kmsg.FetchRequest) (kmsg.Response, error) {
	return b.data.Fetch(ctx, cc, req)
}
