package memserver

import "github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"

// resyncPartition is the partition id of the empty poll a group member gets for a partition
// it does not own: the SDKs re-sync their assignment when they see it.
const resyncPartition = 0xFFFFFFFF

// partitioning is the decoded Partitioning of SendMessages.
type partitioning struct {
	kind uint8
	id   uint32 // PartitionId
	key  []byte // MessagesKey
}

// sendMessages is SendMessages (101). batch is a verified batch record of count messages that
// the partition takes ownership of. As on the real server, a target that does not resolve is
// ResourceNotFound (20) whatever level is missing.
func (s *state) sendMessages(sess *session, streamID, topicID wire.Identifier, part partitioning, batch []byte, count uint32) (wire.SendConfirmation, *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, t, err := s.resolveTopic(streamID, topicID)
	if err != nil {
		return wire.SendConfirmation{}, deny(codeResourceNotFound)
	}
	var pid uint32
	switch part.kind {
	case wire.PartitioningPartitionID:
		pid = part.id
	case wire.PartitioningBalanced:
		if len(t.partitions) == 0 {
			return wire.SendConfirmation{}, deny(codeResourceNotFound)
		}
		pid = t.balanced % uint32(len(t.partitions))
		t.balanced++
	case wire.PartitioningMessagesKey:
		if len(t.partitions) == 0 {
			return wire.SendConfirmation{}, deny(codeResourceNotFound)
		}
		pid = xxh32(part.key) % uint32(len(t.partitions))
	default:
		return wire.SendConfirmation{}, deny(codeResourceNotFound)
	}
	p := t.partition(pid)
	if p == nil {
		return wire.SendConfirmation{}, deny(codeResourceNotFound)
	}
	if err := s.grantsOf(sess).sendMessages(st.id, t.id); err != nil {
		return wire.SendConfirmation{}, err
	}
	base := p.appendBatch(batch, count, s.nowLocked())
	p.persistAfterAppend(t.settings.flush)
	return wire.SendConfirmation{StreamID: st.id, TopicID: t.id, PartitionID: pid, BaseOffset: base}, nil
}

// polled is the outcome of a poll: the reply header fields and the selected frames.
type polled struct {
	partitionID   uint32
	currentOffset uint64
	count         uint32
	spans         []span
}

// emptyPoll is the 16-byte reply the real server gives a poll it cannot serve.
func emptyPoll(partitionID uint32) polled { return polled{partitionID: partitionID} }

// pollMessages is PollMessages (100), following the real server's order of checks:
// authorization on a resolvable stream/topic, then the consumer kind (a group member must name
// a partition it owns, or it gets the re-sync sentinel), then typed not-found errors for a
// plain consumer, then the strategy. Unservable requests get an empty poll, not an error.
func (s *state) pollMessages(sess *session, req wire.PollRequest) (polled, *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, t, nf := s.resolveTopic(req.Stream, req.Topic)
	if nf == nil {
		if err := s.grantsOf(sess).pollMessages(st.id, t.id); err != nil {
			return polled{}, err
		}
	}
	if req.Strategy.Kind < wire.PollOffset || req.Strategy.Kind > wire.PollNext {
		return emptyPoll(0), nil
	}

	var p *partition
	var offsets func() (uint64, bool)
	var commit func(uint64)
	switch req.Consumer.Kind {
	case wire.ConsumerKindGroup:
		if req.Partition == nil {
			return emptyPoll(0), nil
		}
		var g *group
		if nf == nil {
			g = t.resolveGroup(req.Consumer.ID)
		}
		if g == nil || !g.owns(sess.id, *req.Partition) {
			return emptyPoll(resyncPartition), nil
		}
		if p = t.partition(*req.Partition); p == nil {
			return polled{}, deny(codePartitionNotFound)
		}
		offsets = func() (uint64, bool) { o, ok := p.groupOffsets[g.id]; return o, ok }
		commit = func(o uint64) { p.groupOffsets[g.id] = o }
	case wire.ConsumerKindConsumer:
		if nf != nil {
			return polled{}, nf
		}
		pid := uint32(0)
		if req.Partition != nil {
			pid = *req.Partition
		}
		if p = t.partition(pid); p == nil {
			return polled{}, deny(codePartitionNotFound)
		}
		id := req.Consumer.ID
		offsets = func() (uint64, bool) { o, ok := p.consumerOffsets[id]; return o, ok }
		commit = func(o uint64) { p.consumerOffsets[id] = o }
	default:
		return emptyPoll(0), nil
	}

	out := polled{partitionID: p.id, currentOffset: p.currentOffset()}
	if req.Count == 0 || p.next == 0 {
		return out, nil
	}
	var start uint64
	byTime := false
	switch req.Strategy.Kind {
	case wire.PollOffset:
		start = req.Strategy.Value
	case wire.PollTimestamp:
		start, byTime = req.Strategy.Value, true
	case wire.PollFirst:
		start = 0
	case wire.PollLast:
		start = out.currentOffset - min(out.currentOffset, uint64(req.Count)-1)
	case wire.PollNext:
		if o, ok := offsets(); ok {
			start = o + 1
		}
	}
	if !byTime && start > out.currentOffset {
		return out, nil
	}
	spans, n, last := p.readFrom(start, byTime, req.Count)
	out.spans, out.count = spans, n
	if n > 0 && req.AutoCommit {
		commit(last)
	}
	return out, nil
}

// offsetTarget resolves the partition and offset slot of a consumer-offset write. As on the
// real server every resolution failure (missing stream, topic or partition, an unset
// partition, a group the caller does not own the partition in) is ResourceNotFound (20).
func (s *state) offsetTarget(sess *session, c wire.Consumer, streamID, topicID wire.Identifier, partitionID *uint32) (*partition, *uint32, *opError) {
	notFound := deny(codeResourceNotFound)
	if partitionID == nil {
		return nil, nil, notFound
	}
	st, t, err := s.resolveTopic(streamID, topicID)
	if err != nil {
		return nil, nil, notFound
	}
	var groupID *uint32
	switch c.Kind {
	case wire.ConsumerKindGroup:
		g := t.resolveGroup(c.ID)
		if g == nil || !g.owns(sess.id, *partitionID) {
			return nil, nil, notFound
		}
		groupID = &g.id
	case wire.ConsumerKindConsumer:
	default:
		return nil, nil, notFound
	}
	p := t.partition(*partitionID)
	if p == nil {
		return nil, nil, notFound
	}
	if err := s.grantsOf(sess).pollMessages(st.id, t.id); err != nil {
		return nil, nil, err
	}
	return p, groupID, nil
}

// storeOffset is StoreConsumerOffset (121). An empty partition, or an offset past the last
// message, is InvalidOffset (4100) as a status.
func (s *state) storeOffset(sess *session, c wire.Consumer, streamID, topicID wire.Identifier, partitionID *uint32, offset uint64) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, groupID, err := s.offsetTarget(sess, c, streamID, topicID, partitionID)
	if err != nil {
		return err
	}
	if p.next == 0 || offset > p.currentOffset() {
		return deny(codeInvalidOffset)
	}
	if groupID != nil {
		p.groupOffsets[*groupID] = offset
	} else {
		p.consumerOffsets[c.ID] = offset
	}
	return nil
}

// deleteOffset is DeleteConsumerOffset (122); a missing offset is ConsumerOffsetNotFound
// (3021) as a status.
func (s *state) deleteOffset(sess *session, c wire.Consumer, streamID, topicID wire.Identifier, partitionID *uint32) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, groupID, err := s.offsetTarget(sess, c, streamID, topicID, partitionID)
	if err != nil {
		return err
	}
	if groupID != nil {
		if _, ok := p.groupOffsets[*groupID]; !ok {
			return deny(codeConsumerOffsetNotFound)
		}
		delete(p.groupOffsets, *groupID)
		return nil
	}
	if _, ok := p.consumerOffsets[c.ID]; !ok {
		return deny(codeConsumerOffsetNotFound)
	}
	delete(p.consumerOffsets, c.ID)
	return nil
}

// getOffset is GetConsumerOffset (120). An unset partition reads partition 0; a missing
// partition of an existing topic is PartitionNotFound; anything else without a stored offset
// is an empty reply (found = false).
func (s *state) getOffset(sess *session, c wire.Consumer, streamID, topicID wire.Identifier, partitionID *uint32) (o wire.ConsumerOffset, found bool, err *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, t, nf := s.resolveTopic(streamID, topicID)
	if nf != nil {
		return o, false, nil
	}
	if err := s.grantsOf(sess).pollMessages(st.id, t.id); err != nil {
		return o, false, err
	}
	pid := uint32(0)
	if partitionID != nil {
		pid = *partitionID
	}
	p := t.partition(pid)
	if p == nil {
		return o, false, deny(codePartitionNotFound)
	}
	var stored uint64
	var ok bool
	switch c.Kind {
	case wire.ConsumerKindGroup:
		if g := t.resolveGroup(c.ID); g != nil {
			stored, ok = p.groupOffsets[g.id]
		}
	case wire.ConsumerKindConsumer:
		stored, ok = p.consumerOffsets[c.ID]
	}
	if !ok {
		return o, false, nil
	}
	return wire.ConsumerOffset{PartitionID: pid, CurrentOffset: p.currentOffset(), StoredOffset: stored}, true, nil
}
