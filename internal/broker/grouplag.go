package broker

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/dataplane"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// GroupLag is a consumer group's state and how far its committed offsets trail the ends of
// their partitions, for metrics.
type GroupLag struct {
	Group string
	State string // Kafka's group state: Empty, Stable, PreparingRebalance, ...; "" when unknown
	// Lag sums, over the partitions with a committed offset whose end could be read, the high
	// watermark minus the committed offset (never below 0).
	Lag        int64
	Partitions int // the partitions Lag covers
}

// GroupLags computes the lag of at most limit groups, the first in name order, reading each
// topic's ends from Iggy once, within ctx. A topic that cannot be read is left out of the sums.
func (b *Broker) GroupLags(ctx context.Context, limit int) []GroupLag {
	store := b.groups.offsets
	if store == nil {
		return nil
	}
	states := map[string]string{}
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 4 // with group states
	for _, g := range b.groups.coordinator.ListGroups(req).Groups {
		states[g.Group] = g.GroupState
	}
	names := make([]string, 0, len(states))
	for n := range states {
		names = append(names, n)
	}
	store.RangeGroups(func(name, _ string) {
		if _, ok := states[name]; !ok {
			names = append(names, name)
		}
	})
	slices.Sort(names)
	names = names[:min(len(names), limit)]

	ends := map[string]*iggy.Topic{} // nil: unreadable
	out := make([]GroupLag, 0, len(names))
	for _, name := range names {
		gl := GroupLag{Group: name, State: states[name]}
		committed, _ := store.Fetch(name, nil) // an error: still loading, nothing to sum
		for _, t := range committed {
			topic, seen := ends[t.Topic]
			if !seen {
				target := b.topics.Map().Resolve(t.Topic)
				topic, _ = b.storage(nil).GetTopic(ctx, iggy.Name(target.Stream), iggy.Name(target.Topic))
				ends[t.Topic] = topic
			}
			if topic == nil {
				continue
			}
			for _, p := range t.Partitions {
				ip, ok := dataplane.PartitionOf(topic, p.Partition)
				if !ok || p.Offset < 0 {
					continue
				}
				gl.Lag += max(int64(dataplane.HighWatermark(ip))-p.Offset, 0)
				gl.Partitions++
			}
		}
		out = append(out, gl)
	}
	return out
}
