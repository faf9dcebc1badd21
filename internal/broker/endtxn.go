package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

func init() {
	register(kmsg.EndTxn, route{
		serve: typed((*Broker).endTxn),
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.EndTxnResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// endTxn commits or aborts the producer's transaction: markers in every partition of it,
// staged offsets applied on commit (docs/TRANSACTIONS.md).
func (b *Broker) endTxn(ctx context.Context, _ *listener.ConnContext, req *kmsg.EndTxnRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	if b.txn == nil {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp, nil
	}
	resp.ErrorCode = txn.Code(b.txn.EndTxn(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit))
	return resp, nil
}
