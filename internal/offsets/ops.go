package offsets

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
)

// Commit is one partition of an OffsetCommit.
type Commit struct {
	Topic       string
	Partition   int32
	Offset      int64
	LeaderEpoch int32  // -1 when the request has none
	Metadata    string // Kafka stores a null metadata as ""
}

// TopicPartitions names partitions of one topic.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// Commit stores commits for group and returns one result per commit: nil when it is stored,
// otherwise an error carrying its Kafka code (see ErrorCode): OFFSET_METADATA_TOO_LARGE,
// UNKNOWN_TOPIC_OR_PARTITION for an over-long topic name, INVALID_GROUP_ID, or
// COORDINATOR_LOAD_IN_PROGRESS when the store is loading or the log append failed. The commits
// of one call are appended together, and acknowledged only after the append succeeded.
// Membership checks (groups.Coordinator.ValidateOffsetCommit) are the caller's.
func (s *Store) Commit(ctx context.Context, group string, commits []Commit) []error {
	results := make([]error, len(commits))
	if err := s.checkGroup(group); err != nil {
		for i := range results {
			results[i] = err
		}
		return results
	}
	now := s.cfg.Now().UnixMilli()
	state := GroupState{Name: group}
	topicIndex := make(map[string]int)
	var stored []int
	for i, c := range commits {
		switch {
		case len(c.Metadata) > s.cfg.MaxMetadataBytes:
			results[i] = kerr.OffsetMetadataTooLarge
			continue
		case len(c.Topic) > s.cfg.MaxNameBytes:
			results[i] = kerr.UnknownTopicOrPartition
			continue
		}
		ti, ok := topicIndex[c.Topic]
		if !ok {
			ti = len(state.Topics)
			topicIndex[c.Topic] = ti
			state.Topics = append(state.Topics, TopicOffsets{Topic: c.Topic})
		}
		state.Topics[ti].Partitions = append(state.Topics[ti].Partitions, PartitionOffset{
			Partition: c.Partition,
			Committed: Committed{Offset: c.Offset, LeaderEpoch: c.LeaderEpoch, Metadata: c.Metadata, CommitTime: now},
		})
		stored = append(stored, i)
	}
	if len(stored) == 0 {
		return results
	}
	err := s.submit(ctx, s.partitionOf(group), &op{records: []Record{{Kind: KindCommit, Group: state}}})
	if err != nil {
		for _, i := range stored {
			results[i] = err
		}
	}
	return results
}

// Fetch returns group's committed offsets: for topics == nil every stored offset (sorted by
// topic and partition), otherwise exactly the requested partitions, with Offset -1,
// LeaderEpoch -1 and empty metadata where nothing is committed (Kafka's answer). The error is
// COORDINATOR_LOAD_IN_PROGRESS while loading; reads never touch the log.
func (s *Store) Fetch(group string, topics []TopicPartitions) ([]TopicOffsets, error) {
	if err := s.Serving(group); err != nil {
		return nil, err
	}
	p := s.partitionOf(group)
	p.mu.RLock()
	defer p.mu.RUnlock()
	g := p.groups[group]
	if topics == nil {
		if g == nil {
			return nil, nil
		}
		return g.state(group).Topics, nil
	}
	out := make([]TopicOffsets, 0, len(topics))
	for _, t := range topics {
		to := TopicOffsets{Topic: t.Topic, Partitions: make([]PartitionOffset, 0, len(t.Partitions))}
		for _, part := range t.Partitions {
			c, ok := Committed{}, false
			if g != nil {
				c, ok = g.topics[t.Topic][part]
			}
			if !ok {
				c = Committed{Offset: -1, LeaderEpoch: -1}
			}
			to.Partitions = append(to.Partitions, PartitionOffset{Partition: part, Committed: c})
		}
		out = append(out, to)
	}
	return out, nil
}

// DeleteOffsets deletes the named partitions' offsets of group (OffsetDelete); partitions
// without offsets are ignored. Which partitions an active group may lose is the caller's
// decision (groups.Coordinator.OffsetDeleteGuard).
func (s *Store) DeleteOffsets(ctx context.Context, group string, topics []TopicPartitions) error {
	if err := s.checkGroup(group); err != nil {
		return err
	}
	return s.submit(ctx, s.partitionOf(group), &op{decide: func(v view) []Record {
		return deleteOffsetsRecords(v, group, topics)
	}})
}

// deleteOffsetsRecords returns the record deleting those of topics' partitions that group
// has offsets for, if any.
func deleteOffsetsRecords(v view, group string, topics []TopicPartitions) []Record {
	g := v[group]
	if g == nil {
		return nil
	}
	state := GroupState{Name: group}
	for _, t := range topics {
		to := TopicOffsets{Topic: t.Topic}
		for _, part := range t.Partitions {
			if _, ok := g.topics[t.Topic][part]; ok && !slices.ContainsFunc(to.Partitions, func(x PartitionOffset) bool { return x.Partition == part }) {
				to.Partitions = append(to.Partitions, PartitionOffset{Partition: part})
			}
		}
		if len(to.Partitions) > 0 {
			state.Topics = append(state.Topics, to)
		}
	}
	if len(state.Topics) == 0 {
		return nil
	}
	return []Record{{Kind: KindDeleteOffsets, Group: state}}
}

// DeleteGroup deletes everything stored for group and reports whether there was anything. It
// implements groups.Stored; emptiness of the live group is the coordinator's check.
func (s *Store) DeleteGroup(ctx context.Context, group string) (bool, error) {
	if err := s.checkGroup(group); err != nil {
		return false, err
	}
	existed := false
	err := s.submit(ctx, s.partitionOf(group), &op{decide: func(v view) []Record {
		if _, existed = v[group]; !existed {
			return nil
		}
		return []Record{{Kind: KindDeleteGroup, Group: GroupState{Name: group}}}
	}})
	return existed && err == nil, err
}

// RecordGeneration stores a group's generation and protocol type so that a group re-formed
// after a restart continues its generation numbering and an empty group keeps its protocol
// type in DescribeGroups. A group that became empty (members == 0) and has no offsets is
// forgotten instead, as Kafka eventually removes such groups.
func (s *Store) RecordGeneration(ctx context.Context, group string, generation int32, protocolType string, members int) error {
	if err := s.checkGroup(group); err != nil {
		return err
	}
	return s.submit(ctx, s.partitionOf(group), &op{decide: func(v view) []Record {
		return generationRecords(v, group, generation, protocolType, members)
	}})
}

// generationRecords returns what recording a generation writes: nothing when the view
// already has it or a newer one (generation events may be reported late), a delete-group
// for a group that became empty and has no offsets, else a generation record.
func generationRecords(v view, group string, generation int32, protocolType string, members int) []Record {
	g := v[group]
	switch {
	case g != nil && g.hasGeneration && (g.generation > generation || g.generation == generation && g.protocolType == protocolType):
		return nil
	case members == 0 && (g == nil || len(g.topics) == 0):
		if g == nil {
			return nil
		}
		return []Record{{Kind: KindDeleteGroup, Group: GroupState{Name: group}}}
	}
	return []Record{{Kind: KindGeneration, Group: GroupState{
		Name: group, HasGeneration: true, Generation: generation, ProtocolType: protocolType,
	}}}
}

// OnGeneration records a generation in the background; it fits groups.Config.OnGeneration,
// which must not block. The group's log-partition writer records the latest event of each
// group in order with every other write (docs/COORDINATOR-LOG.md §4); failures are logged: a
// lost generation record only costs generation continuity after a restart.
func (s *Store) OnGeneration(ev groups.GenerationEvent) {
	if len(ev.Group) > s.cfg.MaxNameBytes || s.Serving(ev.Group) != nil {
		return // another gateway owns the group's log partition: it alone writes there
	}
	s.partitionOf(ev.Group).w.queueGeneration(ev)
}

// LookupGroup implements groups.Stored.
func (s *Store) LookupGroup(name string) (protocolType string, generation int32, ok bool) {
	if s.Serving(name) != nil {
		return "", 0, false
	}
	p := s.partitionOf(name)
	p.mu.RLock()
	defer p.mu.RUnlock()
	g := p.groups[name]
	if g == nil {
		return "", 0, false
	}
	return g.protocolType, g.generation, true
}

// RangeGroups implements groups.Stored: it calls fn for every group with stored state, in no
// particular order. Groups of log partitions this store does not serve are left out: the
// gateway that owns them lists them.
func (s *Store) RangeGroups(fn func(name, protocolType string)) {
	if s.ready() != nil {
		return
	}
	for _, p := range s.parts {
		if p.serving() != nil {
			continue
		}
		p.mu.RLock()
		for name, g := range p.groups {
			fn(name, g.protocolType)
		}
		p.mu.RUnlock()
	}
}

var _ groups.Stored = (*Store)(nil)
