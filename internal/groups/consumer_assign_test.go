package groups

import (
	"fmt"
	"slices"
	"testing"
)

func tps(spec ...any) partitionSet {
	s := partitionSet{}
	for i := 0; i < len(spec); i += 2 {
		s[topicPartition{spec[i].(string), int32(spec[i+1].(int))}] = struct{}{}
	}
	return s
}

func TestAssignRange(t *testing.T) {
	for _, tc := range []struct {
		name       string
		members    []string
		subscribed map[string][]string
		partitions map[string]int32
		want       map[string]partitionSet
	}{
		{
			name: "ranges in member order, the first ones one more", members: []string{"a", "b"},
			subscribed: map[string][]string{"a": {"t"}, "b": {"t"}}, partitions: map[string]int32{"t": 3},
			want: map[string]partitionSet{"a": tps("t", 0, "t", 1), "b": tps("t", 2)},
		},
		{
			name: "co-partitioned topics get the same numbers", members: []string{"a", "b"},
			subscribed: map[string][]string{"a": {"t", "u"}, "b": {"t", "u"}}, partitions: map[string]int32{"t": 2, "u": 2},
			want: map[string]partitionSet{"a": tps("t", 0, "u", 0), "b": tps("t", 1, "u", 1)},
		},
		{
			name: "only subscribers share a topic", members: []string{"a", "b", "c"},
			subscribed: map[string][]string{"a": {"t"}, "b": {"u"}, "c": {"t"}}, partitions: map[string]int32{"t": 2, "u": 1},
			want: map[string]partitionSet{"a": tps("t", 0), "b": tps("u", 0), "c": tps("t", 1)},
		},
		{
			name: "more members than partitions", members: []string{"a", "b", "c"},
			subscribed: map[string][]string{"a": {"t"}, "b": {"t"}, "c": {"t"}}, partitions: map[string]int32{"t": 1},
			want: map[string]partitionSet{"a": tps("t", 0), "b": {}, "c": {}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := assign(AssignorRange, assignSpec{members: tc.members, subscribed: tc.subscribed, partitions: tc.partitions})
			for m, want := range tc.want {
				if !got[m].equal(want) {
					t.Errorf("member %s: got %v, want %v", m, got[m].sorted(), want.sorted())
				}
			}
		})
	}
}

// checkAssignment checks what every assignor must give: each partition of a subscribed topic
// to exactly one member, and only to a subscriber.
func checkAssignment(t *testing.T, spec assignSpec, got map[string]partitionSet) {
	t.Helper()
	owner := map[topicPartition]string{}
	for m, ps := range got {
		for p := range ps {
			if prev, dup := owner[p]; dup {
				t.Fatalf("%v assigned to %s and %s", p, prev, m)
			}
			owner[p] = m
			if !slices.Contains(spec.subscribed[m], p.topic) {
				t.Fatalf("%v assigned to %s, which does not subscribe to it", p, m)
			}
		}
	}
	for _, m := range spec.members {
		for _, topic := range spec.subscribed[m] {
			for p := range spec.partitions[topic] {
				if _, ok := owner[topicPartition{topic, p}]; !ok {
					t.Fatalf("%s-%d assigned to nobody", topic, p)
				}
			}
		}
	}
}

func spread(got map[string]partitionSet) (lo, hi int) {
	lo = 1 << 30
	for _, ps := range got {
		lo, hi = min(lo, len(ps)), max(hi, len(ps))
	}
	return lo, hi
}

func TestAssignUniformBalancedAndSticky(t *testing.T) {
	for _, tc := range []struct {
		members, partitions int
	}{{1, 6}, {2, 6}, {3, 7}, {4, 3}, {5, 64}, {7, 100}} {
		t.Run(fmt.Sprintf("%d members %d partitions", tc.members, tc.partitions), func(t *testing.T) {
			spec := assignSpec{subscribed: map[string][]string{}, partitions: map[string]int32{"t": int32(tc.partitions) / 2, "u": int32(tc.partitions) - int32(tc.partitions)/2}}
			for i := range tc.members {
				m := fmt.Sprintf("m%02d", i)
				spec.members = append(spec.members, m)
				spec.subscribed[m] = []string{"t", "u"}
			}
			got := assign(AssignorUniform, spec)
			checkAssignment(t, spec, got)
			if lo, hi := spread(got); hi-lo > 1 {
				t.Fatalf("unbalanced: %d to %d partitions", lo, hi)
			}
			// A member joins: only what balance needs moves, and nothing moves between
			// members that were already there.
			spec.previous = got
			spec.members = append(spec.members, "new")
			spec.subscribed["new"] = []string{"t", "u"}
			next := assign(AssignorUniform, spec)
			checkAssignment(t, spec, next)
			if lo, hi := spread(next); hi-lo > 1 {
				t.Fatalf("unbalanced after a join: %d to %d partitions", lo, hi)
			}
			for m, ps := range next {
				if m == "new" {
					continue
				}
				if !subset(ps, got[m]) {
					t.Fatalf("member %s gained %v, moved from another old member", m, ps.sorted())
				}
			}
			// And leaves again: it keeps the others' partitions where they are.
			spec.previous = next
			spec.members = spec.members[:len(spec.members)-1]
			delete(spec.subscribed, "new")
			back := assign(AssignorUniform, spec)
			checkAssignment(t, spec, back)
			for m, ps := range back {
				if !subset(next[m], ps) {
					t.Fatalf("member %s lost partitions when another left", m)
				}
			}
		})
	}
}

func TestAssignUniformDifferentSubscriptions(t *testing.T) {
	spec := assignSpec{
		members:    []string{"a", "b", "c"},
		subscribed: map[string][]string{"a": {"t"}, "b": {"t", "u"}, "c": {"u"}},
		partitions: map[string]int32{"t": 4, "u": 4},
	}
	got := assign(AssignorUniform, spec)
	checkAssignment(t, spec, got)
	if lo, hi := spread(got); hi-lo > 1 {
		t.Fatalf("unbalanced: %v", got)
	}
}
