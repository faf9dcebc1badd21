package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

func init() {
	register(kmsg.TxnOffsetCommit, route{
		serve: typed((*Broker).txnOffsetCommit),
		// invalid is nil: the response (v0–v3) has no error field but per partition, and an
		// undecodable request names none, so the connection is closed.
	})
}

func txnOffsetCommitAnswer(req *kmsg.TxnOffsetCommitRequest, code func(topic string, partition int32) int16) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, rt := range req.Topics {
		t := kmsg.NewTxnOffsetCommitResponseTopic()
		t.Topic = rt.Topic
		for _, p := range rt.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code(rt.Topic, p.Partition)
			t.Partitions = append(t.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// txnOffsetCommit stages a consumer group's offsets in the producer's transaction; they are
// committed with it, and dropped if it aborts (docs/TRANSACTIONS.md). With a generation (v3)
// the member is checked as OffsetCommit checks it.
func (b *Broker) txnOffsetCommit(ctx context.Context, _ *listener.ConnContext, req *kmsg.TxnOffsetCommitRequest) (kmsg.Response, error) {
	if b.txn == nil {
		return txnOffsetCommitAnswer(req, func(string, int32) int16 { return kerr.TransactionalIDAuthorizationFailed.Code }), nil
	}
	if req.Generation >= 0 && b.groups.coordinator != nil {
		if err := b.groups.coordinator.ValidateOffsetCommit(req.Group, req.MemberID, req.InstanceID, req.Generation); err != nil {
			return txnOffsetCommitAnswer(req, func(string, int32) int16 { return err.Code }), nil
		}
	}
	var commits []offsets.Commit
	for _, rt := range req.Topics {
		for _, p := range rt.Partitions {
			c := offsets.Commit{Topic: rt.Topic, Partition: p.Partition, Offset: p.Offset, LeaderEpoch: p.LeaderEpoch}
			if p.Metadata != nil {
				c.Metadata = *p.Metadata
			}
			commits = append(commits, c)
		}
	}
	code := txn.Code(b.txn.CommitOffsets(ctx, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, commits))
	return txnOffsetCommitAnswer(req, func(string, int32) int16 { return code }), nil
}
