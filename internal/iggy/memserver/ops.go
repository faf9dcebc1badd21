package memserver

import (
	"bytes"
	"encoding/binary"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// partitionOp answers SendMessages, StoreConsumerOffset and DeleteConsumerOffset.
func (c *conn) partitionOp(h *wire.RequestHeader, sess *session, body []byte) bool {
	st := c.srv.state
	switch h.Operation {
	case wire.OpSendMessages:
		req, err := wire.DecodeSendMessages(body)
		if err != nil {
			return c.answer(h, deny(wire.CodeOf(err)))
		}
		if err := checkBatch(req.Batch); err != nil {
			return c.answer(h, deny(wire.CodeOf(err)))
		}
		part := partitioning{kind: req.Partitioning.Kind, id: req.Partitioning.PartitionID, key: req.Partitioning.Key}
		// The request buffer is reused for the next frame: the partition keeps a copy.
		conf, oerr := st.sendMessages(sess, req.Stream, req.Topic, part, bytes.Clone(req.Batch), req.MessagesCount)
		if oerr != nil {
			return c.answer(h, oerr)
		}
		c.out = wire.AppendSendConfirmations(c.out[:0], []wire.SendConfirmation{conf})
		return c.answer(h, nil, c.out)
	case wire.OpStoreConsumerOffset:
		req, err := wire.DecodeStoreConsumerOffset(body)
		if err != nil {
			// The real server cannot resolve the target of an undecodable write.
			return c.answerRF(h, deny(codeResourceNotFound), nil)
		}
		return c.answerRF(h, st.storeOffset(sess, req.Consumer, req.Stream, req.Topic, req.Partition, req.Offset), nil)
	default: // wire.OpDeleteConsumerOffset
		req, err := wire.DecodeDeleteConsumerOffset(body)
		if err != nil {
			return c.answerRF(h, deny(codeResourceNotFound), nil)
		}
		return c.answerRF(h, st.deleteOffset(sess, req.Consumer, req.Stream, req.Topic, req.Partition), nil)
	}
}

// checkBatch verifies a producer batch (layout, payloads, user headers, frame and batch
// checksums) and requires frame offset deltas 0..n-1: the server derives every message's
// offset from base_offset + offset_delta, and every SDK writes the frame index there.
func checkBatch(batch []byte) error {
	h, err := wire.VerifyBatch(batch)
	if err != nil {
		return err
	}
	var i uint32
	return wire.WalkFrames(&h, batch, false, func(f wire.Frame) error {
		if f.OffsetDelta != i {
			return &wire.FormatError{Code: codeInvalidFormat, Reason: "frame offset deltas must be 0..n-1"}
		}
		i++
		return nil
	})
}

// metadataOp answers the metadata-plane operations (128..149). Malformed bodies and static
// bounds are denied before the commit (status); the state rejects the rest in the result.
func (c *conn) metadataOp(h *wire.RequestHeader, sess *session, body []byte) bool {
	st := c.srv.state
	out := c.out[:0]
	defer func() { c.out = out[:0] }()
	switch h.Operation {
	case wire.OpCreateStream:
		name, opts, err := wire.DecodeCreateStream(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		if len(opts) != 0 {
			return c.answerRF(h, deny(codeUnsupportedOptionKey), nil) // streams have no options
		}
		v, oerr := st.createStream(sess, name)
		if oerr == nil {
			out = wire.AppendStreamDetails(out, &v.Stream)
		}
		return c.answerRF(h, oerr, out)
	case wire.OpUpdateStream:
		sid, name, opts, err := wire.DecodeUpdateStream(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		if len(opts) != 0 {
			return c.answerRF(h, deny(codeUnsupportedOptionKey), nil)
		}
		return c.answerRF(h, st.updateStream(sess, sid, name), nil)
	case wire.OpDeleteStream, wire.OpPurgeStream:
		var sid wire.Identifier
		if err := wire.DecodeIdentifiers(body, &sid); err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		if h.Operation == wire.OpDeleteStream {
			return c.answerRF(h, st.deleteStream(sess, sid), nil)
		}
		return c.answerRF(h, st.purgeStream(sess, sid), nil)
	case wire.OpCreateTopic:
		req, err := wire.DecodeCreateTopic(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		set, oerr := createSettings(req, wire.TopicOptionsBlock(body, true))
		if oerr != nil {
			return c.answerRF(h, oerr, nil)
		}
		v, oerr := st.createTopic(sess, req.Stream, req.Name, req.PartitionsCount, set)
		if oerr == nil {
			out = wire.AppendTopicDetails(out, &v.Topic)
		}
		return c.answerRF(h, oerr, out)
	case wire.OpUpdateTopic:
		req, err := wire.DecodeUpdateTopic(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		return c.answerRF(h, st.updateTopic(sess, req.Stream, req.Topic, req.Name, req.Options), nil)
	case wire.OpDeleteTopic, wire.OpPurgeTopic:
		var sid, tid wire.Identifier
		if err := wire.DecodeIdentifiers(body, &sid, &tid); err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		if h.Operation == wire.OpDeleteTopic {
			return c.answerRF(h, st.deleteTopic(sess, sid, tid), nil)
		}
		return c.answerRF(h, st.purgeTopic(sess, sid, tid), nil)
	case wire.OpCreatePartitions, wire.OpDeletePartitions:
		sid, tid, n, err := wire.DecodePartitionsChange(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		if n == 0 || n > maxPartitionsPerRequest {
			return c.answerRF(h, deny(codeTooManyPartitions), nil)
		}
		if h.Operation == wire.OpCreatePartitions {
			return c.answerRF(h, st.createPartitions(sess, sid, tid, n), nil)
		}
		return c.answerRF(h, st.deletePartitions(sess, sid, tid, n), nil)
	case wire.OpCreateConsumerGroup:
		sid, tid, name, err := wire.DecodeCreateConsumerGroup(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		v, oerr := st.createGroup(sess, sid, tid, name)
		if oerr == nil {
			out = wire.AppendConsumerGroup(out, &v.ConsumerGroup)
		}
		return c.answerRF(h, oerr, out)
	case wire.OpDeleteConsumerGroup, wire.OpJoinConsumerGroup, wire.OpLeaveConsumerGroup:
		var sid, tid, gid wire.Identifier
		if err := wire.DecodeIdentifiers(body, &sid, &tid, &gid); err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		switch h.Operation {
		case wire.OpDeleteConsumerGroup:
			return c.answerRF(h, st.deleteGroup(sess, sid, tid, gid), nil)
		case wire.OpJoinConsumerGroup:
			return c.answerRF(h, st.joinGroup(sess, sid, tid, gid), nil)
		}
		return c.answerRF(h, st.leaveGroup(sess, sid, tid, gid), nil)
	case wire.OpCreateUser:
		req, opts, err := wire.DecodeCreateUser(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		if len(opts) != 0 {
			return c.answerRF(h, deny(codeUnsupportedOptionKey), nil)
		}
		v, oerr := st.createUser(sess, req.Username, req.Password, req.Status, req.Permissions)
		if oerr == nil {
			out = wire.AppendUserDetails(out, &v.User)
		}
		return c.answerRF(h, oerr, out)
	case wire.OpUpdateUser:
		req, opts, err := wire.DecodeUpdateUser(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		if len(opts) != 0 {
			return c.answerRF(h, deny(codeUnsupportedOptionKey), nil)
		}
		return c.answerRF(h, st.updateUser(sess, req.User, req.Username, req.Status), nil)
	case wire.OpDeleteUser:
		var uid wire.Identifier
		if err := wire.DecodeIdentifiers(body, &uid); err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		return c.answerRF(h, st.deleteUser(sess, uid), nil)
	case wire.OpChangePassword:
		uid, cur, next, err := wire.DecodeChangePassword(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		return c.answerRF(h, st.changePassword(sess, uid, cur, next), nil)
	case wire.OpUpdatePermissions:
		uid, perms, err := wire.DecodeUpdatePermissions(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		return c.answerRF(h, st.updatePermissions(sess, uid, perms), nil)
	case wire.OpCreatePAT:
		name, expiry, err := wire.DecodeCreatePAT(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		token, oerr := st.createPAT(sess, name, expiry)
		if oerr == nil {
			out = wire.AppendRawToken(out, token)
		}
		return c.answerRF(h, oerr, out)
	default: // wire.OpDeletePAT; Validate admits no other client operation
		name, err := wire.DecodeDeletePAT(body)
		if err != nil {
			return c.answerRF(h, decodeDenial(err), nil)
		}
		return c.answerRF(h, st.deletePAT(sess, name), nil)
	}
}

// createSettings resolves a CreateTopic's options against the server defaults and applies
// the real server's static bounds (pre-commit denials): at most 1000 partitions, and a max
// topic size no smaller than one segment.
func createSettings(req wire.CreateTopicRequest, block []byte) (topicSettings, *opError) {
	if req.PartitionsCount > maxPartitionsPerRequest {
		return topicSettings{}, deny(codeTooManyPartitions)
	}
	set := topicSettings{
		compression:   wire.CompressionCode(req.Options.Compression),
		messageExpiry: req.Options.MessageExpiry,
		maxTopicSize:  req.Options.MaxTopicSize,
		segmentSize:   defaultSegmentSize,
		flush:         resolveFlush(req.Options),
		explicit:      explicitFlush(req.Options),
	}
	if set.messageExpiry == 0 {
		set.messageExpiry = wire.Never
	}
	if set.maxTopicSize == 0 {
		set.maxTopicSize = wire.Never
	}
	_ = wire.ParseOptions(block, func(key string, kind uint8, v []byte) error {
		if key == wire.OptionSegmentSize && len(v) == 8 && binary.LittleEndian.Uint64(v) != 0 {
			set.segmentSize = binary.LittleEndian.Uint64(v)
		}
		return nil
	})
	if set.segmentSize < 1<<20 || set.segmentSize > defaultSegmentSize || set.segmentSize%512 != 0 {
		return topicSettings{}, deny(codeInvalidOptionValue)
	}
	if set.maxTopicSize != wire.Never && set.maxTopicSize < set.segmentSize {
		return topicSettings{}, deny(codeInvalidTopicSize)
	}
	return set, nil
}
