package authorize

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Produce needs send on the topic, Fetch and ListOffsets need poll, OffsetForLeaderEpoch needs
// any permission on the topic (Kafka's DESCRIBE), DeleteRecords needs manage on the topic
// (Kafka's DELETE, which Iggy grants with the right to delete the topic): refused topics are answered with
// TOPIC_AUTHORIZATION_FAILED (29) on each of their partitions.

func init() {
	authorizeWith(kmsg.Produce, authorizeProduce)
	authorizeWith(kmsg.Fetch, authorizeFetch)
	authorizeWith(kmsg.ListOffsets, authorizeListOffsets)
	authorizeWith(kmsg.OffsetForLeaderEpoch, authorizeOffsetForLeaderEpoch)
	authorizeWith(kmsg.DeleteRecords, authorizeDeleteRecords)
}

// A Produce with a transactional id needs that id (txn.go), as Kafka asks WRITE on it: without
// it every partition is TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
func authorizeProduce(c *Checker, _ context.Context, a *access, req *kmsg.ProduceRequest, next serveNext) (kmsg.Response, error) {
	if req.TransactionID != nil && *req.TransactionID != "" && !c.txnAllowed(a, *req.TransactionID) {
		if req.Acks == 0 {
			return nil, fmt.Errorf("produce with acks=0 and transactional id %q: %w", *req.TransactionID, kerr.TransactionalIDAuthorizationFailed)
		}
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			t := kmsg.NewProduceResponseTopic()
			t.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				p := kmsg.NewProduceResponseTopicPartition()
				p.Partition, p.ErrorCode = rp.Partition, kerr.TransactionalIDAuthorizationFailed.Code
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp, nil
	}
	var refused []kmsg.ProduceRequestTopic
	req.Topics, refused = split(req.Topics, func(t kmsg.ProduceRequestTopic) bool { return a.canSend(t.Topic) })
	return answerRefused(req, next, refused, func(pr *kmsg.ProduceResponse, rt kmsg.ProduceRequestTopic) {
		t := kmsg.NewProduceResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewProduceResponseTopicPartition()
			p.Partition, p.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
			t.Partitions = append(t.Partitions, p)
		}
		pr.Topics = append(pr.Topics, t)
	})
}

func authorizeFetch(_ *Checker, _ context.Context, a *access, req *kmsg.FetchRequest, next serveNext) (kmsg.Response, error) {
	var refused []kmsg.FetchRequestTopic
	req.Topics, refused = split(req.Topics, func(t kmsg.FetchRequestTopic) bool { return a.canPoll(t.Topic) })
	return answerRefused(req, next, refused, func(fr *kmsg.FetchResponse, rt kmsg.FetchRequestTopic) {
		t := kmsg.NewFetchResponseTopic()
		t.Topic, t.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition, p.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
			p.HighWatermark, p.LastStableOffset, p.LogStartOffset = -1, -1, -1
			t.Partitions = append(t.Partitions, p)
		}
		fr.Topics = append(fr.Topics, t)
	})
}

func authorizeListOffsets(_ *Checker, _ context.Context, a *access, req *kmsg.ListOffsetsRequest, next serveNext) (kmsg.Response, error) {
	var refused []kmsg.ListOffsetsRequestTopic
	req.Topics, refused = split(req.Topics, func(t kmsg.ListOffsetsRequestTopic) bool { return a.canPoll(t.Topic) })
	return answerRefused(req, next, refused, func(lr *kmsg.ListOffsetsResponse, rt kmsg.ListOffsetsRequestTopic) {
		t := kmsg.NewListOffsetsResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewListOffsetsResponseTopicPartition()
			p.Partition, p.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
			t.Partitions = append(t.Partitions, p)
		}
		lr.Topics = append(lr.Topics, t)
	})
}

func authorizeOffsetForLeaderEpoch(_ *Checker, _ context.Context, a *access, req *kmsg.OffsetForLeaderEpochRequest, next serveNext) (kmsg.Response, error) {
	var refused []kmsg.OffsetForLeaderEpochRequestTopic
	req.Topics, refused = split(req.Topics, func(t kmsg.OffsetForLeaderEpochRequestTopic) bool { return a.canDescribe(t.Topic) })
	return answerRefused(req, next, refused, func(or *kmsg.OffsetForLeaderEpochResponse, rt kmsg.OffsetForLeaderEpochRequestTopic) {
		t := kmsg.NewOffsetForLeaderEpochResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			p.Partition, p.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
			p.LeaderEpoch, p.EndOffset = -1, -1
			t.Partitions = append(t.Partitions, p)
		}
		or.Topics = append(or.Topics, t)
	})
}

func authorizeDeleteRecords(_ *Checker, _ context.Context, a *access, req *kmsg.DeleteRecordsRequest, next serveNext) (kmsg.Response, error) {
	var refused []kmsg.DeleteRecordsRequestTopic
	req.Topics, refused = split(req.Topics, func(t kmsg.DeleteRecordsRequestTopic) bool { return a.canManage(t.Topic) })
	return answerRefused(req, next, refused, func(dr *kmsg.DeleteRecordsResponse, rt kmsg.DeleteRecordsRequestTopic) {
		t := kmsg.NewDeleteRecordsResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewDeleteRecordsResponseTopicPartition()
			p.Partition, p.ErrorCode, p.LowWatermark = rp.Partition, kerr.TopicAuthorizationFailed.Code, -1
			t.Partitions = append(t.Partitions, p)
		}
		dr.Topics = append(dr.Topics, t)
	})
}

// split separates the items allowed from the refused ones, keeping their order. It returns
// the input slice itself when nothing is refused.
func split[T any](items []T, allowed func(T) bool) (kept, refused []T) {
	for i, it := range items {
		if allowed(it) {
			if refused != nil {
				kept = append(kept, it)
			}
			continue
		}
		if refused == nil {
			kept = append(make([]T, 0, len(items)), items[:i]...)
		}
		refused = append(refused, it)
	}
	if refused == nil {
		return items, nil
	}
	return kept, refused
}
