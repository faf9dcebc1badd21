package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

func init() {
	register(kmsg.AddOffsetsToTxn, route{
		serve: typed((*Broker).addOffsetsToTxn),
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// addOffsetsToTxn adds a consumer group's offsets to the producer's transaction
// (docs/TRANSACTIONS.md); TxnOffsetCommit then stages them.
func (b *Broker) addOffsetsToTxn(ctx context.Context, _ *listener.ConnContext, req *kmsg.AddOffsetsToTxnRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	if b.txn == nil {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp, nil
	}
	resp.ErrorCode = txn.Code(b.txn.AddOffsets(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group))
	return resp, nil
}
