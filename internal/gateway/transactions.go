package gateway

import (
	"context"
	"fmt"

	"github.com/iggygw/iggy-gateway-kafka/internal/dataplane"
	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

// startTransactions builds the transaction coordinator (docs/TRANSACTIONS.md) over its log in
// Iggy, replays the log into itself and the data plane, wires it into the broker and starts
// its expiry check. Transactions are served by one gateway alone (the log is not fenced by
// owner epochs, docs/TRANSACTIONS.md "Limits") and rest on idempotent producers: with BROKERS
// or without idempotence they stay refused, as before.
func (g *Gateway) startTransactions(ctx context.Context, api iggylog.API, flush durability.Mode) error {
	if len(g.cfg.Peers) > 0 || !g.cfg.IdempotentProducers {
		g.log.Info("transactions refused: they need a single gateway with idempotent producers", "brokers", len(g.cfg.Peers), "idempotent_producers", g.cfg.IdempotentProducers)
		return nil
	}
	ilog := iggylog.NewTopic(api, iggylog.ReservedStream, txn.DefaultTopic, 1)
	ilog.Flush = flush // a decision acknowledged to a producer must survive an Iggy crash
	data := g.broker.Data()
	c := txn.New(txn.Config{
		Log:           ilog,
		NewProducerID: g.broker.NextProducerID,
		Finisher:      txnFinisher{Plane: data, offsets: g.offsets},
		Logger:        g.log.With("component", "transactions"),
	})
	if err := c.Load(ctx, data); err != nil {
		return fmt.Errorf("loading the transaction log from Iggy stream %q, topic %q: %w", iggylog.ReservedStream, txn.DefaultTopic, err)
	}
	g.broker.SetTransactions(c)
	c.Start(ctx)
	g.txn = c
	return nil
}

// closeTransactions stops the coordinator's expiry check.
func (g *Gateway) closeTransactions() {
	if g.txn != nil {
		g.txn.Close()
		g.txn = nil
	}
}

// txnFinisher completes transactions: markers through the data plane, staged offsets into
// the committed-offset store.
type txnFinisher struct {
	*dataplane.Plane
	offsets *offsets.Store
}

// CommitOffsets applies a committed transaction's offsets of group.
func (f txnFinisher) CommitOffsets(ctx context.Context, group string, commits []offsets.Commit) error {
	if f.offsets == nil {
		return fmt.Errorf("no committed-offset store")
	}
	for _, err := range f.offsets.Commit(ctx, group, commits) {
		if err != nil {
			return err
		}
	}
	return nil
}
