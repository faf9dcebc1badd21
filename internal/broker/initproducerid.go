package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

func init() {
	register(kmsg.InitProducerID, route{
		// Not concurrent: with a transactional id it fences earlier epochs and may end a
		// transaction, which the connection's later requests must observe in order.
		serve: typed((*Broker).initProducerID),
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// initProducerID allocates a fresh producer id with epoch 0, as Kafka does for every
// non-transactional request (an existing id and epoch in the request are not bumped: Kafka
// only does that for transactional producers; an idempotent producer bumps its epoch itself,
// KIP-360, and Produce accepts the bump at sequence 0, docs/IDEMPOTENCE.md §1). Ids are unique
// across gateways and restarts (internal/producers, ids.go). A transactional id goes to the
// transaction coordinator (docs/TRANSACTIONS.md): the id's producer and a new epoch, fencing
// earlier producers; without one (SetTransactions not called) it gets UNSUPPORTED_VERSION,
// which Java treats as fatal (transactional clients normally stop earlier, at
// FindCoordinator). Non-transactional requests work without the bridge: nothing is stored.
func (b *Broker) initProducerID(ctx context.Context, cc *listener.ConnContext, req *kmsg.InitProducerIDRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	if req.TransactionalID != nil && *req.TransactionalID != "" {
		if b.txn == nil {
			resp.ErrorCode = kerr.UnsupportedVersion.Code
			resp.ProducerID, resp.ProducerEpoch = -1, -1
			b.log.Info("refused transactional producer (no transaction coordinator)", "conn", cc.ID, "client_id", cc.ClientID(), "transactional_id", *req.TransactionalID)
			return resp, nil
		}
		pid, epoch, err := b.txn.InitProducerID(ctx, *req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch)
		resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode = pid, epoch, txn.Code(err)
		return resp, nil
	}
	resp.ProducerID = b.producers.Next()
	resp.ProducerEpoch = 0
	return resp, nil
}
