package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
)

func init() {
	register(kmsg.OffsetCommit, route{
		serve: typed((*Broker).offsetCommit),
		// Errors are per partition only: an undecodable request closes the connection.
	})
}

// offsetCommit stores committed offsets in the coordinator log, as Kafka decides them:
// partitions that do not exist are refused first (UNKNOWN_TOPIC_OR_PARTITION), then the
// group checks the committing member and generation (member epoch, for a consumer-protocol
// group) for the rest, then the store validates
// and appends them. A commit is acknowledged only once it is in Iggy.
func (b *Broker) offsetCommit(ctx context.Context, cc *listener.ConnContext, req *kmsg.OffsetCommitRequest) (kmsg.Response, error) {
	if err := b.coordinatorError(cc, req.Group); err != nil {
		return groupRefusal(req, err), nil
	}
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	codes := make([][]int16, len(req.Topics))
	var commits []offsets.Commit
	var answers []*int16 // answers[i] is where the outcome of commits[i] goes
	topics := b.offsetTopics(ctx)
	for ti, t := range req.Topics {
		codes[ti] = make([]int16, len(t.Partitions))
		for pi, p := range t.Partitions {
			code := offsetsUnavailable.Code
			if b.groups.offsets != nil {
				code = topics.code(t.Topic, p.Partition)
			}
			if code != 0 {
				codes[ti][pi] = code
				continue
			}
			c := offsets.Commit{Topic: t.Topic, Partition: p.Partition, Offset: p.Offset, LeaderEpoch: -1}
			if req.Version >= 6 {
				c.LeaderEpoch = p.LeaderEpoch
			}
			if p.Metadata != nil {
				c.Metadata = *p.Metadata
			}
			commits = append(commits, c)
			answers = append(answers, &codes[ti][pi])
		}
	}
	if len(commits) > 0 {
		if err := b.groups.coordinator.ValidateOffsetCommitVersion(req.Group, req.MemberID, req.InstanceID, req.Generation, req.Version); err != nil {
			for _, a := range answers {
				*a = err.Code
			}
		} else {
			for i, err := range b.groups.offsets.Commit(ctx, req.Group, commits) {
				*answers[i] = offsets.ErrorCode(err)
			}
		}
	}
	for ti, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for pi, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = codes[ti][pi]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
