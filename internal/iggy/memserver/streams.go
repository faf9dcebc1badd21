package memserver

import "github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"

type stream struct {
	id         uint32
	name       string
	createdAt  uint64
	topics     slab[topic]
	topicIndex map[string]uint32
}

type topic struct {
	id          uint32
	name        string
	createdAt   uint64
	settings    topicSettings
	partitions  []*partition
	groups      map[uint32]*group
	groupIndex  map[string]uint32
	nextGroupID uint32 // group ids are never reused within a topic
	balanced    uint32 // round-robin cursor of Balanced partitioning
}

// topicSettings are a topic's options in force.
type topicSettings struct {
	compression   uint8
	messageExpiry uint64 // µs; wire.Never = never
	maxTopicSize  uint64 // bytes; wire.Never = unlimited
	segmentSize   uint64 // bytes; bounds max_topic_size from below
	flush         flushRules
	explicit      wire.TopicOptions // the flush options given at creation
}

// streamView, topicView and partitionView are snapshots taken under the lock for encoding.
type streamView struct {
	wire.Stream
	topics []topicView
}

type topicView struct {
	wire.Topic
}

func (s *state) resolveStream(id wire.Identifier) (*stream, *opError) {
	var st *stream
	if id.IsName() {
		if n, ok := s.streamIndex[id.Name]; ok {
			st = s.streams.get(n)
		}
	} else {
		st = s.streams.get(id.Numeric)
	}
	if st == nil {
		return nil, deny(codeStreamIDNotFound)
	}
	return st, nil
}

func (st *stream) resolveTopic(id wire.Identifier) (*topic, *opError) {
	var t *topic
	if id.IsName() {
		if n, ok := st.topicIndex[id.Name]; ok {
			t = st.topics.get(n)
		}
	} else {
		t = st.topics.get(id.Numeric)
	}
	if t == nil {
		return nil, deny(codeTopicIDNotFound)
	}
	return t, nil
}

func (s *state) resolveTopic(streamID, topicID wire.Identifier) (*stream, *topic, *opError) {
	st, err := s.resolveStream(streamID)
	if err != nil {
		return nil, nil, err
	}
	t, err := st.resolveTopic(topicID)
	if err != nil {
		return nil, nil, err
	}
	return st, t, nil
}

// metadataStream resolves the stream a metadata operation acts on and checks the session's
// grant for it. Both failures are committed rejections: the real server resolves and
// authorizes metadata operations inside the state machine apply.
func (s *state) metadataStream(sess *session, id wire.Identifier, allowed func(grants, uint32) *opError) (*stream, *opError) {
	st, err := s.resolveStream(id)
	if err != nil {
		return nil, reject(err.code)
	}
	if err := allowed(s.grantsOf(sess), st.id); err != nil {
		return nil, asRejection(err)
	}
	return st, nil
}

// metadataTopic is metadataStream for an operation on a topic.
func (s *state) metadataTopic(sess *session, streamID, topicID wire.Identifier, allowed func(grants, uint32, uint32) *opError) (*stream, *topic, *opError) {
	st, t, err := s.resolveTopic(streamID, topicID)
	if err != nil {
		return nil, nil, reject(err.code)
	}
	if err := allowed(s.grantsOf(sess), st.id, t.id); err != nil {
		return nil, nil, asRejection(err)
	}
	return st, t, nil
}

func (t *topic) partition(id uint32) *partition {
	if uint64(id) >= uint64(len(t.partitions)) {
		return nil
	}
	return t.partitions[id]
}

func (t *topic) view(withPartitions bool) topicView {
	v := topicView{
		Topic: wire.Topic{
			ID:              t.id,
			CreatedAt:       t.createdAt,
			Name:            t.name,
			PartitionsCount: uint32(len(t.partitions)),
			MessageExpiry:   t.settings.messageExpiry,
			MaxTopicSize:    t.settings.maxTopicSize,
			Compression:     t.settings.compression,
			Options:         t.settings.explicit,
			DerivedOptions:  derivedFlush(t.settings.explicit, t.settings.flush),
		},
	}
	for _, p := range t.partitions {
		pv := p.view()
		v.SizeBytes += pv.SizeBytes
		v.MessagesCount += pv.MessagesCount
		if withPartitions {
			v.Partitions = append(v.Partitions, pv)
		}
	}
	return v
}

func (st *stream) view(withTopics bool) streamView {
	v := streamView{Stream: wire.Stream{
		ID:          st.id,
		CreatedAt:   st.createdAt,
		Name:        st.name,
		TopicsCount: uint32(st.topics.len()),
	}}
	st.topics.each(func(_ uint32, t *topic) {
		tv := t.view(false)
		v.SizeBytes += tv.SizeBytes
		v.MessagesCount += tv.MessagesCount
		if withTopics {
			v.topics = append(v.topics, tv)
		}
	})
	return v
}

// createStream is CreateStream (202). Options must be empty (the stream catalog has no keys),
// which the caller checks before committing.
func (s *state) createStream(sess *session, name string) (streamView, *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.grantsOf(sess).createStream(); err != nil {
		return streamView{}, asRejection(err)
	}
	if _, ok := s.streamIndex[name]; ok {
		return streamView{}, reject(codeStreamNameAlreadyExists)
	}
	st := &stream{name: name, createdAt: s.nowLocked(), topicIndex: map[string]uint32{}}
	st.id = s.streams.insert(st)
	s.streamIndex[name] = st.id
	s.committed()
	return st.view(true), nil
}

// getStream is GetStream (200); found is false for an unknown stream (an empty reply body).
func (s *state) getStream(sess *session, id wire.Identifier) (v streamView, found bool, err *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, nf := s.resolveStream(id)
	if nf != nil {
		return streamView{}, false, nil
	}
	if err := s.grantsOf(sess).getStream(st.id); err != nil {
		return streamView{}, false, err
	}
	return st.view(true), true, nil
}

// getStreams is GetStreams (201).
func (s *state) getStreams(sess *session) ([]streamView, *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.grantsOf(sess).getStreams(); err != nil {
		return nil, err
	}
	var out []streamView
	s.streams.each(func(_ uint32, st *stream) { out = append(out, st.view(false)) })
	return out, nil
}

// updateStream is UpdateStream (204): a rename.
func (s *state) updateStream(sess *session, id wire.Identifier, name string) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.metadataStream(sess, id, grants.manageStream)
	if err != nil {
		return err
	}
	if other, ok := s.streamIndex[name]; ok && other != st.id {
		return reject(codeStreamNameAlreadyExists)
	}
	delete(s.streamIndex, st.name)
	st.name = name
	s.streamIndex[name] = st.id
	s.committed()
	return nil
}

// deleteStream is DeleteStream (203).
func (s *state) deleteStream(sess *session, id wire.Identifier) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.metadataStream(sess, id, grants.manageStream)
	if err != nil {
		return err
	}
	delete(s.streamIndex, st.name)
	s.streams.remove(st.id)
	s.committed()
	return nil
}

// purgeStream is PurgeStream (205): every partition of every topic restarts empty at offset 0
// with no stored offsets; topics, partitions and groups stay.
func (s *state) purgeStream(sess *session, id wire.Identifier) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.metadataStream(sess, id, grants.manageStream)
	if err != nil {
		return err
	}
	st.topics.each(func(_ uint32, t *topic) { t.purge() })
	s.committed()
	return nil
}

func (t *topic) purge() {
	for _, p := range t.partitions {
		p.purge()
	}
}

// createTopic is CreateTopic (302). The caller has validated the partition count and the
// options (both are pre-commit denials on a real server).
func (s *state) createTopic(sess *session, streamID wire.Identifier, name string, partitions uint32, set topicSettings) (topicView, *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.metadataStream(sess, streamID, grants.createTopic)
	if err != nil {
		return topicView{}, err
	}
	if _, ok := st.topicIndex[name]; ok {
		return topicView{}, reject(codeTopicNameAlreadyExists)
	}
	now := s.nowLocked()
	t := &topic{
		name:       name,
		createdAt:  now,
		settings:   set,
		groups:     map[uint32]*group{},
		groupIndex: map[string]uint32{},
	}
	for i := range partitions {
		t.partitions = append(t.partitions, newPartition(i, now))
	}
	t.id = st.topics.insert(t)
	st.topicIndex[name] = t.id
	s.committed()
	v := t.view(true)
	for i := range v.Partitions {
		// The real 0.9 server answers CreateTopic before the partitions' first segments exist:
		// its reply reports 0 segments, later GetTopic replies at least 1.
		v.Partitions[i].SegmentsCount = 0
	}
	return v, nil
}

// getTopic is GetTopic (300); found is false for an unknown stream or topic.
func (s *state) getTopic(sess *session, streamID, topicID wire.Identifier) (v topicView, found bool, err *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, t, nf := s.resolveTopic(streamID, topicID)
	if nf != nil {
		return topicView{}, false, nil
	}
	if err := s.grantsOf(sess).getTopic(st.id, t.id); err != nil {
		return topicView{}, false, err
	}
	return t.view(true), true, nil
}

// getTopics is GetTopics (301); an unknown stream lists no topics, as on the real server.
func (s *state) getTopics(sess *session, streamID wire.Identifier) ([]topicView, *opError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, nf := s.resolveStream(streamID)
	if nf != nil {
		return nil, nil
	}
	if err := s.grantsOf(sess).getTopics(st.id); err != nil {
		return nil, err
	}
	var out []topicView
	st.topics.each(func(_ uint32, t *topic) { out = append(out, t.view(false)) })
	return out, nil
}

// updateTopic is UpdateTopic (304): a rename plus an option patch in which zero values
// (server default) leave a setting unchanged. A max topic size below the topic's segment size
// is InvalidTopicSize, denied before the commit.
func (s *state) updateTopic(sess *session, streamID, topicID wire.Identifier, name string, up wire.TopicOptions) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, t, err := s.metadataTopic(sess, streamID, topicID, grants.manageTopic)
	if err != nil {
		return err
	}
	if up.MaxTopicSize != 0 && up.MaxTopicSize != wire.Never && up.MaxTopicSize < t.settings.segmentSize {
		return deny(codeInvalidTopicSize)
	}
	if other, ok := st.topicIndex[name]; ok && other != t.id {
		return reject(codeTopicNameAlreadyExists)
	}
	delete(st.topicIndex, t.name)
	t.name = name
	st.topicIndex[name] = t.id
	if up.Compression != "" {
		t.settings.compression = wire.CompressionCode(up.Compression)
	}
	if up.MessageExpiry != 0 {
		t.settings.messageExpiry = up.MessageExpiry
	}
	if up.MaxTopicSize != 0 {
		t.settings.maxTopicSize = up.MaxTopicSize
	}
	s.committed()
	return nil
}

// deleteTopic is DeleteTopic (303).
func (s *state) deleteTopic(sess *session, streamID, topicID wire.Identifier) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, t, err := s.metadataTopic(sess, streamID, topicID, grants.manageTopic)
	if err != nil {
		return err
	}
	delete(st.topicIndex, t.name)
	st.topics.remove(t.id)
	s.committed()
	return nil
}

// purgeTopic is PurgeTopic (305).
func (s *state) purgeTopic(sess *session, streamID, topicID wire.Identifier) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, t, err := s.metadataTopic(sess, streamID, topicID, grants.manageTopic)
	if err != nil {
		return err
	}
	t.purge()
	s.committed()
	return nil
}

// createPartitions is CreatePartitions (402): count new partitions with the next ids. The
// caller has checked 1 <= count <= 1000.
func (s *state) createPartitions(sess *session, streamID, topicID wire.Identifier, count uint32) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, t, err := s.metadataTopic(sess, streamID, topicID, grants.manageTopic)
	if err != nil {
		return err
	}
	if uint64(len(t.partitions))+uint64(count) > maxPartitionsPerTopic {
		return reject(codeInvalidPartitionsCount)
	}
	now := s.nowLocked()
	for range count {
		t.partitions = append(t.partitions, newPartition(uint32(len(t.partitions)), now))
	}
	t.rebalanceGroups()
	s.committed()
	return nil
}

// deletePartitions is DeletePartitions (403): removes the count highest-numbered partitions.
func (s *state) deletePartitions(sess *session, streamID, topicID wire.Identifier, count uint32) *opError {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, t, err := s.metadataTopic(sess, streamID, topicID, grants.manageTopic)
	if err != nil {
		return err
	}
	if uint64(count) > uint64(len(t.partitions)) {
		return reject(codeInvalidPartitionsCount)
	}
	t.partitions = t.partitions[:len(t.partitions)-int(count)]
	t.rebalanceGroups()
	s.committed()
	return nil
}
