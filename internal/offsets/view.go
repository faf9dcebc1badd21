package offsets

import (
	"cmp"
	"slices"
	"strings"
)

// view is the current state of one log partition: every group that hashes to it.
type view map[string]*groupView

type groupView struct {
	hasGeneration bool
	generation    int32
	protocolType  string
	topics        map[string]map[int32]Committed
}

func (v view) group(name string) *groupView {
	g := v[name]
	if g == nil {
		g = &groupView{topics: make(map[string]map[int32]Committed)}
		v[name] = g
	}
	return g
}

// apply applies one record. Replay and live writes both go through here, so the view after a
// restart equals the view before it.
func (v view) apply(r *Record) {
	switch r.Kind {
	case KindCommit:
		v.group(r.Group.Name).merge(&r.Group)
	case KindDeleteOffsets:
		g := v[r.Group.Name]
		if g == nil {
			return
		}
		for _, t := range r.Group.Topics {
			ps := g.topics[t.Topic]
			for _, p := range t.Partitions {
				delete(ps, p.Partition)
			}
			if len(ps) == 0 {
				delete(g.topics, t.Topic)
			}
		}
		if len(g.topics) == 0 && !g.hasGeneration {
			delete(v, r.Group.Name)
		}
	case KindDeleteGroup:
		delete(v, r.Group.Name)
	case KindGeneration:
		v.group(r.Group.Name).merge(&r.Group)
	case KindCheckpoint:
		for i := range r.Groups {
			v.group(r.Groups[i].Name).merge(&r.Groups[i])
		}
	}
}

// merge folds a record's group state into g. Generations only move forward (generation
// records are written asynchronously and may arrive out of order).
func (g *groupView) merge(s *GroupState) {
	if s.HasGeneration && (!g.hasGeneration || s.Generation >= g.generation) {
		g.hasGeneration = true
		g.generation = s.Generation
		g.protocolType = s.ProtocolType
	}
	for _, t := range s.Topics {
		ps := g.topics[t.Topic]
		if ps == nil {
			ps = make(map[int32]Committed, len(t.Partitions))
			g.topics[t.Topic] = ps
		}
		for _, p := range t.Partitions {
			ps[p.Partition] = p.Committed
		}
	}
}

// state returns the group's state in a deterministic order.
func (g *groupView) state(name string) GroupState {
	s := GroupState{Name: name, HasGeneration: g.hasGeneration, Generation: g.generation, ProtocolType: g.protocolType}
	for topic, ps := range g.topics {
		s.Topics = append(s.Topics, topicOffsets(topic, ps))
	}
	slices.SortFunc(s.Topics, func(a, b TopicOffsets) int { return strings.Compare(a.Topic, b.Topic) })
	return s
}

func topicOffsets(topic string, ps map[int32]Committed) TopicOffsets {
	t := TopicOffsets{Topic: topic, Partitions: make([]PartitionOffset, 0, len(ps))}
	for p, c := range ps {
		t.Partitions = append(t.Partitions, PartitionOffset{Partition: p, Committed: c})
	}
	slices.SortFunc(t.Partitions, func(a, b PartitionOffset) int { return cmp.Compare(a.Partition, b.Partition) })
	return t
}

// snapshot returns every group's state, sorted by group name.
func (v view) snapshot() []GroupState {
	out := make([]GroupState, 0, len(v))
	for name, g := range v {
		out = append(out, g.state(name))
	}
	slices.SortFunc(out, func(a, b GroupState) int { return strings.Compare(a.Name, b.Name) })
	return out
}
