package groups

import (
	"cmp"
	"maps"
	"slices"
)

// The server-side assignors of the consumer group protocol (KIP-848), under Kafka's names.
// Both are deterministic functions of the members' subscriptions, the subscribed topics'
// partition counts and the previous target assignment (docs/CONSUMER-GROUPS.md, "Consumer
// protocol"): the coordinator computes a new target only when the group epoch moves.
const (
	AssignorUniform = "uniform"
	AssignorRange   = "range"
)

// knownAssignor reports whether name is a server-side assignor this coordinator runs.
func knownAssignor(name string) bool { return name == AssignorUniform || name == AssignorRange }

// topicPartition names one partition.
type topicPartition struct {
	topic     string
	partition int32
}

func compareTP(a, b topicPartition) int {
	if c := cmp.Compare(a.topic, b.topic); c != 0 {
		return c
	}
	return cmp.Compare(a.partition, b.partition)
}

// partitionSet is a set of partitions, the unit of assignments.
type partitionSet map[topicPartition]struct{}

func (s partitionSet) sorted() []topicPartition {
	out := slices.Collect(maps.Keys(s))
	slices.SortFunc(out, compareTP)
	return out
}

func (s partitionSet) clone() partitionSet { return maps.Clone(s) }

func (s partitionSet) equal(o partitionSet) bool {
	if len(s) != len(o) {
		return false
	}
	for p := range s {
		if _, ok := o[p]; !ok {
			return false
		}
	}
	return true
}

// assignSpec is the input of an assignor: each member's subscribed topics (only topics that
// exist), the partition count of each topic, and the previous target assignment.
type assignSpec struct {
	members    []string // sorted member ids
	subscribed map[string][]string
	partitions map[string]int32
	previous   map[string]partitionSet
}

// assign runs the named assignor.
func assign(name string, spec assignSpec) map[string]partitionSet {
	if name == AssignorRange {
		return assignRange(spec)
	}
	return assignUniform(spec)
}

// assignRange is Kafka's range assignor, server side: for each topic, its subscribers in
// member-id order get consecutive ranges of partitions, the first (partitions % subscribers)
// one more than the others. Members subscribed to the same topics with the same partition
// counts therefore get the same partition numbers (co-partitioning), which is why clients ask
// for it.
func assignRange(spec assignSpec) map[string]partitionSet {
	out := make(map[string]partitionSet, len(spec.members))
	byTopic := make(map[string][]string)
	for _, m := range spec.members {
		out[m] = partitionSet{}
		for _, t := range spec.subscribed[m] {
			byTopic[t] = append(byTopic[t], m)
		}
	}
	for t, subs := range byTopic {
		n := spec.partitions[t]
		per, extra := n/int32(len(subs)), n%int32(len(subs))
		next := int32(0)
		for i, m := range subs {
			count := per
			if int32(i) < extra {
				count++
			}
			for p := next; p < next+count; p++ {
				out[m][topicPartition{t, p}] = struct{}{}
			}
			next += count
		}
	}
	return out
}

// assignUniform is the uniform assignor: every subscribed partition goes to exactly one of its
// subscribers, the counts are as even as the subscriptions allow (for identical subscriptions
// no member has more than one partition more than another), and partitions stay where the
// previous target put them unless balance needs them elsewhere. It works in three steps:
// keep the previous partitions each member still subscribes to (up to the balanced share),
// give every unassigned partition to its least-loaded subscriber, then move partitions from
// the most to the least loaded subscriber while that narrows the gap.
func assignUniform(spec assignSpec) map[string]partitionSet {
	out := make(map[string]partitionSet, len(spec.members))
	subscribers := make(map[string][]string) // topic -> members, in member order
	for _, m := range spec.members {
		out[m] = partitionSet{}
		for _, t := range spec.subscribed[m] {
			subscribers[t] = append(subscribers[t], m)
		}
	}
	var all []topicPartition
	for t := range subscribers {
		for p := range spec.partitions[t] {
			all = append(all, topicPartition{t, p})
		}
	}
	slices.SortFunc(all, compareTP)
	if len(spec.members) == 0 {
		return out
	}
	// The balanced share when subscriptions are identical; with different subscriptions the
	// moving step below evens out what it can.
	share := (len(all) + len(spec.members) - 1) / len(spec.members)
	owner := make(map[topicPartition]string, len(all))
	for _, m := range spec.members {
		subscribed := make(map[string]bool, len(spec.subscribed[m]))
		for _, t := range spec.subscribed[m] {
			subscribed[t] = true
		}
		for _, p := range spec.previous[m].sorted() {
			if len(out[m]) >= share {
				break
			}
			if subscribed[p.topic] && p.partition < spec.partitions[p.topic] {
				if _, taken := owner[p]; !taken {
					out[m][p] = struct{}{}
					owner[p] = m
				}
			}
		}
	}
	leastLoaded := func(candidates []string) string {
		best := candidates[0]
		for _, m := range candidates[1:] {
			if len(out[m]) < len(out[best]) {
				best = m
			}
		}
		return best
	}
	for _, p := range all {
		if _, ok := owner[p]; ok {
			continue
		}
		m := leastLoaded(subscribers[p.topic])
		out[m][p] = struct{}{}
		owner[p] = m
	}
	// Balance: move one partition at a time from a member to a less loaded subscriber of its
	// topic when that leaves the receiver no fuller than the giver was. Each move lowers the
	// sum of squared loads, so the loop ends.
	for moved := true; moved; {
		moved = false
		for _, p := range all {
			from := owner[p]
			to := leastLoaded(subscribers[p.topic])
			if len(out[to])+1 < len(out[from]) {
				delete(out[from], p)
				out[to][p] = struct{}{}
				owner[p] = to
				moved = true
			}
		}
	}
	return out
}
