package broker

import (
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

// SetTransactions wires the transaction coordinator (internal/txn, docs/TRANSACTIONS.md),
// which the gateway builds over the data plane (its Finisher) once the broker exists. Until
// it is called (and without the bridge), transactional ids are refused as before: FindCoordinator
// answers 53, InitProducerId 35 and Produce refuses transactional batches. Call it before
// serving.
func (b *Broker) SetTransactions(c *txn.Coordinator) {
	b.txn = c
	b.data.SetTransactions(c)
}

// NextProducerID allocates a producer id, unique across gateways (internal/producers); the
// transaction coordinator takes its ids from here.
func (b *Broker) NextProducerID() int64 { return b.producers.Next() }
