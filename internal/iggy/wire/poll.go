package wire

// PollReplyHeaderSize is the size of the fixed part of a PollMessages reply:
// [partition_id:u32][current_offset:u64][messages_count:u32].
const PollReplyHeaderSize = 16

// ResyncPartition is the partition id of an empty group poll whose member does not own the
// partition it asked for: the member must SyncConsumerGroup again.
const ResyncPartition = 0xFFFFFFFF

// AppendPollReplyHeader appends the fixed part of a PollMessages reply; the batch records
// (from AppendBatchSlice or stored whole) follow it.
func AppendPollReplyHeader(dst []byte, partitionID uint32, currentOffset uint64, messages uint32) []byte {
	dst = le.AppendUint32(dst, partitionID)
	dst = le.AppendUint64(dst, currentOffset)
	return le.AppendUint32(dst, messages)
}

// DecodePolled decodes a PollMessages reply. Messages alias body. Each batch record's frames
// must tile it, the frame total must equal messages_count, and with verify set every frame
// checksum is checked. Offsets are base_offset + offset_delta, Timestamp is the batch's
// base_timestamp and OriginTimestamp is origin_timestamp + timestamp_delta.
func DecodePolled(body []byte, verify bool) (*Polled, error) {
	r := NewReader(body)
	p := &Polled{PartitionID: r.U32("partition id"), CurrentOffset: r.U64("current offset")}
	count := r.Count("messages", FrameHeaderSize)
	if err := r.Err(); err != nil {
		return nil, err
	}
	if count > 0 {
		p.Messages = make([]PolledMessage, 0, count)
	}
	rest := r.Rest()
	for len(rest) > 0 {
		h, rec, next, err := SplitBatch(rest)
		if err != nil {
			return nil, err
		}
		if uint64(len(p.Messages))+uint64(h.MessageCount) > uint64(count) {
			return nil, formatErr(codeInvalidFormat, "poll reply holds more than its %d messages", count)
		}
		err = WalkFrames(&h, rec, verify, func(f Frame) error {
			p.Messages = append(p.Messages, PolledMessage{
				Offset:          h.BaseOffset + uint64(f.OffsetDelta),
				Timestamp:       h.BaseTimestamp,
				OriginTimestamp: h.OriginTimestamp + uint64(f.TimestampDelta),
				ID:              f.ID,
				Checksum:        f.Checksum,
				Payload:         f.Payload,
				Headers:         f.Headers,
			})
			return nil
		})
		if err != nil {
			return nil, err
		}
		rest = next
	}
	if len(p.Messages) != count {
		return nil, formatErr(codeInvalidFormat, "poll reply holds %d messages, header says %d", len(p.Messages), count)
	}
	return p, nil
}
