package broker

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	// No top-level error field to answer an undecodable request with: it closes the
	// connection.
	register(kmsg.OffsetForLeaderEpoch, route{serve: typed((*Broker).offsetsForLeaderEpoch), concurrent: true})
}

const offsetsForLeaderEpochTimeout = 10 * time.Second

// offsetsForLeaderEpoch answers, for each partition's requested leader epoch, the largest
// epoch at or below it and the offset where that epoch ends (the start of the next epoch, or
// the high watermark for the current one): clients validating their position after a
// leader-epoch change (KIP-320) move back to that offset when they are past it
// (docs/DATA-PATH.md, "Truncation and leader epochs").
func (b *Broker) offsetsForLeaderEpoch(ctx context.Context, cc *listener.ConnContext, req *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	ctx, cancel := context.WithTimeout(ctx, offsetsForLeaderEpochTimeout)
	defer cancel()
	resp.Topics = make([]kmsg.OffsetForLeaderEpochResponseTopic, len(req.Topics))
	for i := range req.Topics {
		rt, t := &req.Topics[i], &resp.Topics[i]
		*t = kmsg.NewOffsetForLeaderEpochResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.OffsetForLeaderEpochResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			t.Partitions[j] = kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			t.Partitions[j].Partition = rt.Partitions[j].Partition
		}
		b.topicEpochEnds(ctx, cc, rt, t)
	}
	return resp, nil
}

// topicEpochEnds answers the partitions of one topic.
func (b *Broker) topicEpochEnds(ctx context.Context, cc *listener.ConnContext, rt *kmsg.OffsetForLeaderEpochRequestTopic, t *kmsg.OffsetForLeaderEpochResponseTopic) {
	fail := func(code int16) {
		for j := range t.Partitions {
			t.Partitions[j].ErrorCode = code
		}
	}
	target, topic, code := b.readTopic(ctx, cc, rt.Topic, logEpochRead, "offsets for leader epoch")
	if code != 0 {
		fail(code)
		return
	}
	s := b.storage(cc)
	for j := range rt.Partitions {
		rp, out := &rt.Partitions[j], &t.Partitions[j]
		ip, ok := partitionOf(topic, rp.Partition)
		if !ok {
			out.ErrorCode = kerr.UnknownTopicOrPartition.Code
			continue
		}
		k := partKey{Target: target, Partition: ip.ID}
		ip, err := b.readOffsets(ctx, s, k, b.data.part(k), ip)
		if err != nil {
			out.ErrorCode = dataErrorCode(err, false)
			continue
		}
		if out.ErrorCode = b.epochs.validate(ctx, k, rp.CurrentLeaderEpoch); out.ErrorCode != 0 {
			continue
		}
		out.LeaderEpoch, out.EndOffset = b.epochs.endOffset(k, rp.LeaderEpoch, highWatermark(ip))
	}
}
