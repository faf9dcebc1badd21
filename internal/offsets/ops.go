package offsets

import (
	"context"
	"slices"
	"time"

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
	p := s.partitionOf(group)
	p.writeMu.Lock()
	err := s.appendLocked(ctx, p, Record{Kind: KindCommit, Group: state})
	p.writeMu.Unlock()
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
	if err := s.ready(); err != nil {
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
	p := s.partitionOf(group)
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	state := GroupState{Name: group}
	p.mu.RLock()
	if g := p.groups[group]; g != nil {
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
	}
	p.mu.RUnlock()
	if len(state.Topics) == 0 {
		return nil
	}
	return s.appendLocked(ctx, p, Record{Kind: KindDeleteOffsets, Group: state})
}

// DeleteGroup deletes everything stored for group and reports whether there was anything. It
// implements groups.Stored; emptiness of the live group is the coordinator's check.
func (s *Store) DeleteGroup(ctx context.Context, group string) (bool, error) {
	if err := s.checkGroup(group); err != nil {
		return false, err
	}
	p := s.partitionOf(group)
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	p.mu.RLock()
	_, ok := p.groups[group]
	p.mu.RUnlock()
	if !ok {
		return false, nil
	}
	return true, s.appendLocked(ctx, p, Record{Kind: KindDeleteGroup, Group: GroupState{Name: group}})
}

// RecordGeneration stores a group's generation and protocol type so that a group re-formed
// after a restart continues its generation numbering and an empty group keeps its protocol
// type in DescribeGroups. A group that became empty (members == 0) and has no offsets is
// forgotten instead, as Kafka eventually removes such groups.
func (s *Store) RecordGeneration(ctx context.Context, group string, generation int32, protocolType string, members int) error {
	if err := s.checkGroup(group); err != nil {
		return err
	}
	p := s.partitionOf(group)
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	p.mu.RLock()
	g := p.groups[group]
	exists := g != nil
	noOffsets := g == nil || len(g.topics) == 0
	current := g != nil && g.hasGeneration && g.generation >= generation && g.protocolType == protocolType
	p.mu.RUnlock()
	switch {
	case members == 0 && noOffsets:
		if !exists {
			return nil
		}
		return s.appendLocked(ctx, p, Record{Kind: KindDeleteGroup, Group: GroupState{Name: group}})
	case current:
		return nil
	}
	return s.appendLocked(ctx, p, Record{Kind: KindGeneration, Group: GroupState{
		Name: group, HasGeneration: true, Generation: generation, ProtocolType: protocolType,
	}})
}

// generationTimeout bounds the background append of OnGeneration.
const generationTimeout = 30 * time.Second

// OnGeneration records a generation in the background; it fits groups.Config.OnGeneration,
// which must not block. Failures are logged: a lost generation record only costs generation
// continuity after a restart.
func (s *Store) OnGeneration(ev groups.GenerationEvent) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), generationTimeout)
		defer cancel()
		if err := s.RecordGeneration(ctx, ev.Group, ev.Generation, ev.ProtocolType, ev.Members); err != nil {
			s.cfg.Logger.Warn("recording consumer group generation failed", "group", ev.Group, "generation", ev.Generation, "err", err)
		}
	}()
}

// LookupGroup implements groups.Stored.
func (s *Store) LookupGroup(name string) (protocolType string, generation int32, ok bool) {
	if s.ready() != nil {
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
// particular order.
func (s *Store) RangeGroups(fn func(name, protocolType string)) {
	if s.ready() != nil {
		return
	}
	for _, p := range s.parts {
		p.mu.RLock()
		for name, g := range p.groups {
			fn(name, g.protocolType)
		}
		p.mu.RUnlock()
	}
}

var _ groups.Stored = (*Store)(nil)
