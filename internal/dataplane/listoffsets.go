package dataplane

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkacode"
	"github.com/iggygw/iggy-gateway-kafka/internal/kafkareq"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/mapping"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// Special timestamps of ListOffsets.
const (
	latestTimestamp   = -1
	earliestTimestamp = -2
	maxTimestamp      = -3
)

const (
	listOffsetsTimeout = 20 * time.Second
	// A timestamp lookup reads forward from Iggy's answer for at most this many messages,
	// each poll asking for about timestampScanBytes.
	timestampScanMessages = 1000
	timestampScanBytes    = 1 << 20
)

// listOffsets answers EARLIEST with the log start offset, LATEST with the high watermark,
// MAX_TIMESTAMP with the last record, and a timestamp with the first record whose Kafka
// timestamp is at or after it (see timestampOffset). With isolation level read_committed the
// latest offset is the last stable offset (docs/TRANSACTIONS.md), as in Kafka.
func (dp *Plane) ListOffsets(ctx context.Context, cc *listener.ConnContext, req *kmsg.ListOffsetsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	ctx, cancel := context.WithTimeout(ctx, listOffsetsTimeout)
	defer cancel()
	resp.Topics = make([]kmsg.ListOffsetsResponseTopic, len(req.Topics))
	dup := duplicateListOffsetsPartitions(req)
	for i := range req.Topics {
		rt, t := &req.Topics[i], &resp.Topics[i]
		*t = kmsg.NewListOffsetsResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.ListOffsetsResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			p := kmsg.NewListOffsetsResponseTopicPartition()
			p.Partition = rt.Partitions[j].Partition
			p.Timestamp, p.Offset, p.LeaderEpoch = -1, -1, -1
			if dup[topicPartition{rt.Topic, p.Partition}] {
				p.ErrorCode = kerr.InvalidRequest.Code
			}
			t.Partitions[j] = p
		}
		dp.listTopicOffsets(ctx, cc, rt, t)
		if req.IsolationLevel == 1 && topicmap.ValidateKafkaName(rt.Topic) == nil && !dp.bridgeOff() {
			target := dp.topics.Map().Resolve(rt.Topic)
			for j := range t.Partitions {
				out := &t.Partitions[j]
				if out.ErrorCode == 0 && out.Offset >= 0 && rt.Partitions[j].Timestamp == latestTimestamp {
					lso, _ := dp.lastStable(partKey{Target: target, Partition: uint32(out.Partition)}, uint64(out.Offset))
					out.Offset = int64(lso)
				}
			}
		}
	}
	return resp, nil
}

type topicPartition struct {
	topic     string
	partition int32
}

// duplicateListOffsetsPartitions returns the partitions req names more than once (in one
// topic entry or in two entries of the same topic), or nil. Kafka answers every entry of
// such a partition with INVALID_REQUEST rather than answering it twice
// (ListOffsetsRequest.duplicatePartitions).
func duplicateListOffsetsPartitions(req *kmsg.ListOffsetsRequest) map[topicPartition]bool {
	var named []topicPartition
	for i := range req.Topics {
		for _, p := range req.Topics[i].Partitions {
			named = append(named, topicPartition{req.Topics[i].Topic, p.Partition})
		}
	}
	return kafkareq.Repeated(len(named), func(i int) topicPartition { return named[i] })
}

func (dp *Plane) listTopicOffsets(ctx context.Context, cc *listener.ConnContext, rt *kmsg.ListOffsetsRequestTopic, t *kmsg.ListOffsetsResponseTopic) {
	fail := func(code int16) {
		for j := range t.Partitions {
			if t.Partitions[j].ErrorCode == 0 { // duplicates keep INVALID_REQUEST, as in Kafka
				t.Partitions[j].ErrorCode = code
			}
		}
	}
	target, topic, code := dp.readTopic(ctx, cc, rt.Topic, logListOffsetsRead, "list offsets")
	if code != 0 {
		fail(code)
		return
	}
	rules := dp.rulesOf(ctx, rt.Topic, topic.ID)
	for j := range rt.Partitions {
		out := &t.Partitions[j]
		if out.ErrorCode != 0 { // a duplicate (listOffsets)
			continue
		}
		ip, ok := PartitionOf(topic, out.Partition)
		if !ok {
			out.ErrorCode = kerr.UnknownTopicOrPartition.Code
			continue
		}
		k := partKey{Target: target, Partition: ip.ID}
		rp := &rt.Partitions[j]
		offset, ts, err := dp.partitionOffset(ctx, dp.storage(cc), k, ip, rp.Timestamp, rules)
		if err != nil {
			out.ErrorCode = kafkacode.ForData(err, false)
			dp.logEntry(slog.LevelWarn, logListOffsetsRead, "list offsets: read failed", "conn", cc.ID, "topic", rt.Topic, "partition", out.Partition, "kafka_error", out.ErrorCode, "err", err)
			continue
		}
		if out.ErrorCode = dp.epochs.validate(ctx, k, rp.CurrentLeaderEpoch); out.ErrorCode != 0 {
			continue
		}
		out.Offset, out.Timestamp, out.LeaderEpoch = offset, ts, dp.offsetEpoch(k, rp.Timestamp, offset)
	}
}

// partitionOffset answers one partition: an offset and its timestamp (-1 when not asked for a
// record's timestamp), or -1, -1 when no record matches. Records below the log start offset
// set by DeleteRecords (rules) do not exist for it.
func (dp *Plane) partitionOffset(ctx context.Context, s Storage, k partKey, ip *iggy.Partition, target int64, rules topicRules) (offset, ts int64, err error) {
	st := dp.data.part(k)
	ip, err = dp.readOffsets(ctx, s, k, st, ip)
	if err != nil {
		return -1, -1, err
	}
	hw := HighWatermark(ip)
	deleted := int64(rules.logStartFloor(int32(k.Partition), 0, hw))
	switch target {
	case latestTimestamp:
		return int64(hw), -1, nil
	case earliestTimestamp:
		ls, err := dp.logStartOffset(ctx, s, k, st, hw)
		return int64(rules.logStartFloor(int32(k.Partition), ls, hw)), -1, err
	case maxTimestamp:
		if hw == 0 || deleted >= int64(hw) {
			return -1, -1, nil
		}
		polled, err := s.PollMessages(ctx, k.pollRequest(iggy.PollingStrategy{Kind: iggy.PollLast}, 1))
		if err != nil || len(polled.Messages) == 0 {
			return -1, -1, err
		}
		m := &polled.Messages[len(polled.Messages)-1]
		return int64(m.Offset), recordTimestamp(m, rules.logAppendTime), nil
	}
	if hw == 0 || deleted >= int64(hw) {
		return -1, -1, nil
	}
	offset, ts, err = dp.timestampOffset(ctx, s, k, st, ip, target, hw, rules.logAppendTime)
	if offset >= 0 && offset < deleted {
		// The record found was deleted: the first one left is the earliest candidate (its
		// timestamp is not read again).
		offset, ts = deleted, -1
	}
	return offset, ts, err
}

// offsetEpoch is the leader epoch ListOffsets answers with offset (for timestamp target):
// the current epoch for the latest offset, else the epoch of the record at offset; -1 when
// no record matched.
func (dp *Plane) offsetEpoch(k partKey, target, offset int64) int32 {
	switch {
	case offset < 0:
		return -1
	case target == latestTimestamp:
		return dp.epochs.current(k)
	}
	epoch, _, _ := dp.epochs.at(k, uint64(offset))
	return epoch
}

// timestampOffset finds the first record whose Kafka timestamp is at or after target (ms).
//
// Iggy can only look messages up by its own append time, so that is where the search starts:
// every record whose Kafka timestamp is at or after target was appended at or after it too,
// as long as producers' clocks are not ahead of the Iggy server's. From there the records are
// read forward until one's Kafka timestamp (what Fetch returns) reaches target. If none does
// within timestampScanMessages, the first record appended at or after target is the answer
// (Kafka's answer for a topic with LogAppendTime).
func (dp *Plane) timestampOffset(ctx context.Context, s Storage, k partKey, st *partState, ip *iggy.Partition, target int64, hw uint64, appendTime bool) (int64, int64, error) {
	from := uint64(0)
	if target > 0 {
		if uint64(target) > math.MaxUint64/1000 {
			return -1, -1, nil
		}
		from = uint64(target) * 1000
	}
	strategy := iggy.PollingStrategy{Kind: iggy.PollTimestamp, Value: from}
	size := st.messageSize(storedSize(ip))
	var first *iggy.PolledMessage
	for scanned := 0; scanned < timestampScanMessages; {
		count := uint32(min(timestampScanBytes/size+1, timestampScanMessages-scanned, maxPollCount))
		polled, err := pollFitting(ctx, s, k, st, strategy, count)
		if err != nil {
			return -1, -1, err
		}
		if len(polled.Messages) == 0 {
			break
		}
		for i := range polled.Messages {
			m := &polled.Messages[i]
			if first == nil {
				first = m
			}
			if ts := recordTimestamp(m, appendTime); ts >= target {
				return int64(m.Offset), ts, nil
			}
		}
		last := polled.Messages[len(polled.Messages)-1].Offset
		scanned += len(polled.Messages)
		if last+1 >= hw {
			return -1, -1, nil // read to the end: no record is that recent
		}
		strategy = iggy.PollingStrategy{Kind: iggy.PollOffset, Value: last + 1}
	}
	if first == nil {
		return -1, -1, nil
	}
	return int64(first.Offset), recordTimestamp(first, appendTime), nil
}

// recordTimestamp is the timestamp Fetch gives m's record: its Iggy append time on a
// LogAppendTime topic (appendTime) or when it cannot be mapped.
func recordTimestamp(m *iggy.PolledMessage, appendTime bool) int64 {
	if appendTime {
		return int64(m.Timestamp / 1000)
	}
	stored := mapping.Stored{Offset: m.Offset, Timestamp: m.Timestamp, OriginTimestamp: m.OriginTimestamp,
		Payload: m.Payload, Headers: m.Headers}
	rec, err := mapping.ToRecord(&stored, nil)
	if err != nil {
		return int64(m.Timestamp / 1000)
	}
	return rec.Timestamp
}
