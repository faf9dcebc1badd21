package dataplane

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

const offsetsForLeaderEpochTimeout = 10 * time.Second

// offsetsForLeaderEpoch answers, for each partition's requested leader epoch, the largest
// epoch at or below it and the offset where that epoch ends (the start of the next epoch, or
// the high watermark for the current one): clients validating their position after a
// leader-epoch change (KIP-320) move back to that offset when they are past it
// (docs/DATA-PATH.md, "Truncation and leader epochs").
func (dp *Plane) OffsetsForLeaderEpoch(ctx context.Context, cc *listener.ConnContext, req *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error) {
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
		dp.topicEpochEnds(ctx, cc, rt, t)
	}
	return resp, nil
}

// topicEpochEnds answers the partitions of one topic.
func (dp *Plane) topicEpochEnds(ctx context.Context, cc *listener.ConnContext, rt *kmsg.OffsetForLeaderEpochRequestTopic, t *kmsg.OffsetForLeaderEpochResponseTopic) {
	fail := func(code int16) {
		for j := range t.Partitions {
			t.Partitions[j].ErrorCode = code
		}
	}
	target, topic, code := dp.readTopic(ctx, cc, rt.Topic, logEpochRead, "offsets for leader epoch")
	if code != 0 {
		fail(code)
		return
	}
	s := dp.storage(cc)
	for j := range rt.Partitions {
		rp, out := &rt.Partitions[j], &t.Partitions[j]
		ip, ok := PartitionOf(topic, rp.Partition)
		if !ok {
			out.ErrorCode = kerr.UnknownTopicOrPartition.Code
			continue
		}
		k := partKey{Target: target, Partition: ip.ID}
		ip, err := dp.readOffsets(ctx, s, k, dp.data.part(k), ip)
		if err != nil {
			out.ErrorCode = kafkacode.ForData(err, false)
			continue
		}
		if out.ErrorCode = dp.epochs.validate(ctx, k, rp.CurrentLeaderEpoch); out.ErrorCode != 0 {
			continue
		}
		out.LeaderEpoch, out.EndOffset = dp.epochs.endOffset(k, rp.LeaderEpoch, HighWatermark(ip))
	}
}
