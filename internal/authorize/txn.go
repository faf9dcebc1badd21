package authorize

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/groupacl"
)

// Transactional ids are authorized as Kafka authorizes its TransactionalId resource
// (docs/SECURITY.md, "Transactions"), from the same source as groups, since Iggy has no
// permission on them either: a user may use a transactional id when the group ACLs let it
// READ a group of the same name (by default the ids named "<user>." and what follows), or
// when it has the global manage_servers permission. Under the "topics" group default only
// bindings and manage_servers count: that default is no tenant boundary, and a transactional
// id must be one (whoever may use it can fence its producer and abort its transaction).
// Adding a partition to a transaction also needs send on its topic, and committing a group's
// offsets in one what OffsetCommit needs (the group, and poll on the topics). Refusals answer
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53), TOPIC_AUTHORIZATION_FAILED (29) or
// GROUP_AUTHORIZATION_FAILED (30), as Kafka with ACLs does.

func init() {
	authorizeWith(kmsg.AddPartitionsToTxn, authorizeAddPartitionsToTxn)
	authorizeWith(kmsg.AddOffsetsToTxn, authorizeAddOffsetsToTxn)
	authorizeWith(kmsg.TxnOffsetCommit, authorizeTxnOffsetCommit)
	authorizeWith(kmsg.EndTxn, func(c *Checker, _ context.Context, a *access, req *kmsg.EndTxnRequest, next serveNext) (kmsg.Response, error) {
		if !c.txnAllowed(a, req.TransactionalID) {
			resp := req.ResponseKind().(*kmsg.EndTxnResponse)
			resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
			return resp, nil
		}
		return next(req)
	})
}

// txnAllowed reports whether the user may use the transactional id (and records a refusal).
func (c *Checker) txnAllowed(a *access, id string) bool {
	return a.check(a.grants.ManageServers() || c.acl.Allowed(a.user, id).Has(groupacl.Read))
}

func authorizeAddPartitionsToTxn(c *Checker, _ context.Context, a *access, req *kmsg.AddPartitionsToTxnRequest, next serveNext) (kmsg.Response, error) {
	if req.Version >= 4 {
		return next(req) // not served (internal/versions)
	}
	answer := func(code func(topic string) int16) (kmsg.Response, error) {
		resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
		for _, rt := range req.Topics {
			t := kmsg.NewAddPartitionsToTxnResponseTopic()
			t.Topic = rt.Topic
			for _, p := range rt.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, code(rt.Topic)
				t.Partitions = append(t.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp, nil
	}
	if !c.txnAllowed(a, req.TransactionalID) {
		return answer(func(string) int16 { return kerr.TransactionalIDAuthorizationFailed.Code })
	}
	refused := map[string]bool{}
	for _, t := range req.Topics {
		if !a.canSend(t.Topic) {
			refused[t.Topic] = true
		}
	}
	if len(refused) > 0 { // all or nothing, as Kafka: the others are not attempted
		return answer(func(topic string) int16 {
			if refused[topic] {
				return kerr.TopicAuthorizationFailed.Code
			}
			return kerr.OperationNotAttempted.Code
		})
	}
	return next(req)
}

func authorizeAddOffsetsToTxn(c *Checker, _ context.Context, a *access, req *kmsg.AddOffsetsToTxnRequest, next serveNext) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	if !c.txnAllowed(a, req.TransactionalID) {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp, nil
	}
	if code := c.groupAllows(a, req.Group, groupacl.Read); code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	return next(req)
}

func authorizeTxnOffsetCommit(c *Checker, _ context.Context, a *access, req *kmsg.TxnOffsetCommitRequest, next serveNext) (kmsg.Response, error) {
	code := int16(0)
	switch {
	case !c.txnAllowed(a, req.TransactionalID):
		code = kerr.TransactionalIDAuthorizationFailed.Code
	default:
		code = c.groupAllows(a, req.Group, groupacl.Read)
	}
	var refused []kmsg.TxnOffsetCommitRequestTopic
	if code == 0 {
		req.Topics, refused = split(req.Topics, func(t kmsg.TxnOffsetCommitRequestTopic) bool { return a.canPoll(t.Topic) })
		code = kerr.TopicAuthorizationFailed.Code
	} else {
		req.Topics, refused = nil, req.Topics
	}
	answer := func(tr *kmsg.TxnOffsetCommitResponse, rt kmsg.TxnOffsetCommitRequestTopic) {
		t := kmsg.NewTxnOffsetCommitResponseTopic()
		t.Topic = rt.Topic
		for _, p := range rt.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			t.Partitions = append(t.Partitions, rp)
		}
		tr.Topics = append(tr.Topics, t)
	}
	if len(req.Topics) == 0 {
		resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		for _, rt := range refused {
			answer(resp, rt)
		}
		return resp, nil
	}
	return answerRefused(req, next, refused, answer)
}
