package dataplane

import (
	"context"
	"encoding/binary"
	"strconv"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/topicstate"
)

// topicRules are the stored configs the data path honours (docs/TOPIC-CONFIGS.md).
type topicRules struct {
	// maxBatch is max.message.bytes: a larger produced batch is MESSAGE_TOO_LARGE; 0: none
	// beyond the frame limit.
	maxBatch int
	// logAppendTime is message.timestamp.type=LogAppendTime.
	logAppendTime bool
	// logStart are DeleteRecords' log start offsets by partition.
	logStart map[int32]int64
}

// rulesOf reads the rules of a topic whose Iggy topic id is topicID (a view at most
// topicstate.DefaultRefresh behind other gateways).
func (dp *Plane) rulesOf(ctx context.Context, kafkaTopic string, topicID uint32) topicRules {
	if dp.state == nil {
		return topicRules{}
	}
	return rulesFrom(dp.state.Get(ctx, kafkaTopic, topicID))
}

func rulesFrom(st topicstate.State) topicRules {
	r := topicRules{logStart: st.LogStart, logAppendTime: st.Configs[topicstate.ConfigTimestampType] == topicstate.TimestampAppendTime}
	if v, ok := st.Configs[topicstate.ConfigMaxMessageBytes]; ok {
		r.maxBatch, _ = strconv.Atoi(v) // checked when stored
	}
	return r
}

// tooLarge reports whether a produced records field holds a batch larger than the rules
// allow. It reads only the batch length fields; what does not parse is left to the batch
// checks that follow.
func (r topicRules) tooLarge(records []byte) bool {
	if r.maxBatch <= 0 {
		return false
	}
	const lengthEnd = 12 // base offset (8) + batch length (4)
	for len(records) >= lengthEnd {
		size := lengthEnd + int(int32(binary.BigEndian.Uint32(records[8:12])))
		if size > r.maxBatch {
			return true
		}
		if size <= lengthEnd || size > len(records) {
			return false
		}
		records = records[size:]
	}
	return false
}

// stampAppendTime gives the acknowledged partitions of LogAppendTime topics their append
// time, as Kafka answers (the gateway's clock when Iggy confirmed the write; Fetch returns
// Iggy's own append timestamps).
func stampAppendTime(parts []producePart) {
	now := time.Now().UnixMilli()
	for i := range parts {
		if p := &parts[i]; p.logAppendTime && p.out.ErrorCode == 0 {
			p.out.LogAppendTime = now
		}
	}
}

// logStartFloor is a partition's log start offset: Iggy's first offset ls, raised to what
// DeleteRecords set (never past the high watermark hw, in case Iggy lost its tail).
func (r topicRules) logStartFloor(partition int32, ls, hw uint64) uint64 {
	if deleted, ok := r.logStart[partition]; ok && uint64(deleted) > ls {
		return min(uint64(deleted), hw)
	}
	return ls
}
