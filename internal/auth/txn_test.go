package auth_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTransactionalIDBoundary: a tenant runs transactions under its own transactional ids
// ("<user>." by default, docs/SECURITY.md "Transactions") on topics it may send to; another
// tenant can neither find, initialise (and so fence), end nor write under that id, nor add a
// topic it may not send to, and gets what Kafka with ACLs answers (53, 29).
func TestTransactionalIDBoundary(t *testing.T) {
	g, carol, dave := startTenants(t)
	ctx := ctxT(t)
	const id = "carol.tx"

	own := g.kafka("SASL_PLAINTEXT", plainAuth(carol.name, carol.name+"-secret"), kgo.TransactionalID(id))
	if err := own.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := own.ProduceSync(ctx, &kgo.Record{Topic: carol.topic, Value: []byte("in a transaction")}).FirstErr(); err != nil {
		t.Fatalf("carol produces in her transaction: %v", err)
	}
	if err := own.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("carol commits: %v", err)
	}

	code := kerr.TransactionalIDAuthorizationFailed.Code
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.CoordinatorType, find.CoordinatorKeys = 1, []string{id}
	if r := direct(ctx, t, dave.cl, find).(*kmsg.FindCoordinatorResponse); len(r.Coordinators) != 1 || r.Coordinators[0].ErrorCode != code {
		t.Errorf("dave finds the coordinator of %s: %+v, want 53", id, r.Coordinators)
	}
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
	if r := direct(ctx, t, dave.cl, init).(*kmsg.InitProducerIDResponse); r.ErrorCode != code {
		t.Errorf("dave initialises %s: error %d, want 53", id, r.ErrorCode)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID = id
	if r := direct(ctx, t, dave.cl, end).(*kmsg.EndTxnResponse); r.ErrorCode != code {
		t.Errorf("dave ends %s: error %d, want 53", id, r.ErrorCode)
	}
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.Version = 3
	add.TransactionalID = "dave.tx"
	at := kmsg.NewAddPartitionsToTxnRequestTopic()
	at.Topic, at.Partitions = carol.topic, []int32{0}
	add.Topics = append(add.Topics, at)
	if r := direct(ctx, t, dave.cl, add).(*kmsg.AddPartitionsToTxnResponse); len(r.Topics) != 1 || r.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("dave adds carol's topic to his transaction: %+v, want 29", r.Topics)
	}

	thief := g.kafka("SASL_PLAINTEXT", plainAuth(dave.name, dave.name+"-secret"), kgo.TransactionalID(id))
	err := thief.BeginTransaction()
	if err == nil {
		err = thief.ProduceSync(ctx, &kgo.Record{Topic: dave.topic, Value: []byte("x")}).FirstErr()
	}
	if err == nil || !strings.Contains(err.Error(), kerr.TransactionalIDAuthorizationFailed.Message) {
		t.Errorf("dave's producer under %s: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", id, err)
	}
}
