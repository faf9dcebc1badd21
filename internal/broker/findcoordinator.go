package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.FindCoordinator, route{
		serve:      typed((*Broker).findCoordinator),
		concurrent: true,
		invalid: func(req kmsg.Request) kmsg.Response {
			if req.GetVersion() >= 4 {
				return nil // v4+ has errors only per key: close
			}
			resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// Coordinator key types.
const (
	coordinatorGroup       = 0
	coordinatorTransaction = 1
)

// coordinator answers one key: groups and transactional ids are coordinated where the
// placement says (this gateway, by default; docs/TRANSACTIONS.md). Without a transaction
// coordinator (SetTransactions not called: no bridge, or several gateways) transactional ids
// get TRANSACTIONAL_ID_AUTHORIZATION_FAILED, fatal in Java and librdkafka, so a transactional
// producer fails at once with a clear error. Other types (share groups) are invalid here.
func (b *Broker) coordinator(cc *listener.ConnContext, keyType int8, key string) (node int32, host string, port int32, code int16, msg *string) {
	switch {
	case keyType == coordinatorGroup, keyType == coordinatorTransaction && b.txn != nil:
		n := b.placement.Coordinator(cc.Listener, key)
		if n.ID < 0 { // no gateway is live (this one lost Iggy): clients retry
			m := "no gateway coordinates this key right now"
			return -1, "", -1, kerr.CoordinatorNotAvailable.Code, &m
		}
		return n.ID, n.Host, n.Port, 0, nil
	case keyType == coordinatorTransaction:
		m := "transactions are not available on this gateway"
		return -1, "", -1, kerr.TransactionalIDAuthorizationFailed.Code, &m
	default:
		m := "unsupported coordinator type"
		return -1, "", -1, kerr.InvalidRequest.Code, &m
	}
}

func (b *Broker) findCoordinator(_ context.Context, cc *listener.ConnContext, req *kmsg.FindCoordinatorRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keyType := req.CoordinatorType
	if req.Version == 0 {
		keyType = coordinatorGroup
	}
	if req.Version < 4 {
		resp.NodeID, resp.Host, resp.Port, resp.ErrorCode, resp.ErrorMessage = b.coordinator(cc, keyType, req.CoordinatorKey)
		return resp, nil
	}
	resp.Coordinators = make([]kmsg.FindCoordinatorResponseCoordinator, 0, len(req.CoordinatorKeys))
	for _, key := range req.CoordinatorKeys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key = key
		c.NodeID, c.Host, c.Port, c.ErrorCode, c.ErrorMessage = b.coordinator(cc, keyType, key)
		resp.Coordinators = append(resp.Coordinators, c)
	}
	return resp, nil
}
