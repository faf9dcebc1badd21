package dataplane

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkareq"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// deleteRecords raises the log start offset of each partition to the requested offset (-1:
// the high watermark), as Kafka Streams does to purge its repartition topics. The offsets are
// kept in the topic-state log (durable, the same on every gateway); Fetch and ListOffsets
// honour them. Iggy's messages below them stay on disk until Iggy's retention removes them
// (docs/TOPIC-CONFIGS.md).
func (dp *Plane) DeleteRecords(ctx context.Context, cc *listener.ConnContext, req *kmsg.DeleteRecordsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	ctx, cancel := kafkareq.Context(ctx, req.TimeoutMillis)
	defer cancel()
	for i := range req.Topics {
		rt := &req.Topics[i]
		t := kmsg.NewDeleteRecordsResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewDeleteRecordsResponseTopicPartition()
			p.Partition, p.LowWatermark = rp.Partition, -1
			t.Partitions = append(t.Partitions, p)
		}
		dp.deleteTopicRecords(ctx, cc, rt, &t)
		resp.Topics = append(resp.Topics, t)
	}
	return resp, nil
}

func (dp *Plane) deleteTopicRecords(ctx context.Context, cc *listener.ConnContext, rt *kmsg.DeleteRecordsRequestTopic, t *kmsg.DeleteRecordsResponseTopic) {
	fail := func(code int16) {
		for j := range t.Partitions {
			if t.Partitions[j].ErrorCode == 0 {
				t.Partitions[j].ErrorCode = code
			}
		}
	}
	target, topic, code := dp.readTopic(ctx, cc, rt.Topic, logDeleteRecordsRead, "delete records")
	if code == 0 && dp.state == nil {
		code = kerr.UnknownServerError.Code // a gateway built without its topic-state store
	}
	if code != 0 {
		fail(code)
		return
	}
	s := dp.storage(cc)
	starts := make(map[int32]int64, len(rt.Partitions))
	ends := make(map[int32]uint64, len(rt.Partitions))
	for j, rp := range rt.Partitions {
		out := &t.Partitions[j]
		ip, ok := PartitionOf(topic, rp.Partition)
		if !ok {
			out.ErrorCode = kerr.UnknownTopicOrPartition.Code
			continue
		}
		hw := HighWatermark(ip)
		dp.data.part(partKey{Target: target, Partition: ip.ID}).observe(ip)
		switch off := rp.Offset; {
		case off == -1:
			starts[rp.Partition] = int64(hw)
		case off < 0 || off > int64(hw):
			out.ErrorCode = kerr.OffsetOutOfRange.Code
			continue
		default:
			starts[rp.Partition] = off
		}
		ends[rp.Partition] = hw
	}
	if len(starts) == 0 {
		return
	}
	raised, err := dp.state.RaiseLogStart(ctx, rt.Topic, topic.ID, starts)
	if err != nil {
		dp.log.Warn("delete records: storing the log start offsets failed", "conn", cc.ID, "topic", rt.Topic, "err", err)
		fail(kerr.RequestTimedOut.Code)
		return
	}
	rules := topicRules{logStart: raised}
	for j := range t.Partitions {
		out := &t.Partitions[j]
		if _, ok := starts[out.Partition]; !ok || out.ErrorCode != 0 {
			continue
		}
		k := partKey{Target: target, Partition: uint32(out.Partition)}
		hw := ends[out.Partition]
		ls, err := dp.logStartOffset(ctx, s, k, dp.data.part(k), hw)
		if err != nil {
			out.ErrorCode = kafkacode.ForData(err, false)
			continue
		}
		out.LowWatermark = int64(rules.logStartFloor(out.Partition, ls, hw))
	}
	dp.log.Info("deleted records", "conn", cc.ID, "topic", rt.Topic, "log_start", raised)
}
