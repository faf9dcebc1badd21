package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

func init() {
	register(kmsg.AddPartitionsToTxn, route{
		serve: typed((*Broker).addPartitionsToTxn),
		// invalid is nil: the response (v0–v3) has no error field but per partition, and an
		// undecodable request names none, so the connection is closed.
	})
}

// addPartitionsAnswer answers every partition of req (the client form, v0–v3) with code.
func addPartitionsAnswer(req *kmsg.AddPartitionsToTxnRequest, code func(topic string, partition int32) int16) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, rt := range req.Topics {
		t := kmsg.NewAddPartitionsToTxnResponseTopic()
		t.Topic = rt.Topic
		for _, p := range rt.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code(rt.Topic, p)
			t.Partitions = append(t.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// addPartitionsToTxn adds partitions to the producer's transaction (docs/TRANSACTIONS.md),
// all or none: every partition gets the coordinator's answer. A partition that does not exist
// is UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED, as in Kafka.
func (b *Broker) addPartitionsToTxn(ctx context.Context, _ *listener.ConnContext, req *kmsg.AddPartitionsToTxnRequest) (kmsg.Response, error) {
	if b.txn == nil {
		return addPartitionsAnswer(req, func(string, int32) int16 { return kerr.TransactionalIDAuthorizationFailed.Code }), nil
	}
	var tps []txn.TP
	missing := map[txn.TP]bool{}
	for _, rt := range req.Topics {
		r, err := b.topics.Resolve(ctx, rt.Topic)
		for _, p := range rt.Partitions {
			tp := txn.TP{Topic: rt.Topic, Partition: p}
			if err != nil || p < 0 || uint32(p) >= r.Partitions {
				missing[tp] = true
			}
			tps = append(tps, tp)
		}
	}
	if len(missing) > 0 {
		return addPartitionsAnswer(req, func(topic string, p int32) int16 {
			if missing[txn.TP{Topic: topic, Partition: p}] {
				return kerr.UnknownTopicOrPartition.Code
			}
			return kerr.OperationNotAttempted.Code
		}), nil
	}
	code := txn.Code(b.txn.AddPartitions(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, tps))
	return addPartitionsAnswer(req, func(string, int32) int16 { return code }), nil
}
