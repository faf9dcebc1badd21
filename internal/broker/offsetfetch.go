package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
)

func init() {
	register(kmsg.OffsetFetch, route{
		serve:      typed((*Broker).offsetFetch),
		concurrent: true,
		invalid: func(req kmsg.Request) kmsg.Response {
			if v := req.GetVersion(); v < 2 || v >= 8 {
				return nil // no request-level error field (per partition, or per group): close
			}
			resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// offsetFetch answers from the store's in-memory view: the requested partitions (-1 where
// nothing is committed), or with a null topic list (v2+) everything the group committed.
// v8+ asks for several groups at once; from v9 a member of a consumer-protocol group names
// itself and its member epoch, which must be current. Classic groups need no membership check to read, and
// there are no pending transactional offsets, so RequireStable changes nothing.
func (b *Broker) offsetFetch(ctx context.Context, cc *listener.ConnContext, req *kmsg.OffsetFetchRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	// Each group's offsets (every committed partition, for a null topic list) are reserved
	// from the request memory budget as they are built (docs/LIMITS.md).
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group = rg.Group
			var wanted []offsets.TopicPartitions
			if rg.Topics != nil {
				wanted = make([]offsets.TopicPartitions, 0, len(rg.Topics))
				for _, t := range rg.Topics {
					wanted = append(wanted, offsets.TopicPartitions{Topic: t.Topic, Partitions: t.Partitions})
				}
			}
			var found []offsets.TopicOffsets
			if err := b.groups.coordinator.ValidateOffsetFetch(rg.Group, rg.MemberID, rg.MemberEpoch); req.Version >= 9 && err != nil {
				g.ErrorCode = err.Code // a consumer-protocol member at another epoch (v9+)
			} else {
				found, g.ErrorCode = b.fetchOffsets(cc, rg.Group, wanted)
			}
			for _, t := range found {
				gt := kmsg.NewOffsetFetchResponseGroupTopic()
				gt.Topic = t.Topic
				for _, p := range t.Partitions {
					gp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					gp.Partition, gp.Offset, gp.LeaderEpoch = p.Partition, p.Offset, p.LeaderEpoch
					gp.Metadata = kmsg.StringPtr(p.Metadata)
					gt.Partitions = append(gt.Partitions, gp)
				}
				g.Topics = append(g.Topics, gt)
			}
			if err := listener.ReserveAnswer(ctx, g); err != nil {
				return nil, err
			}
			resp.Groups = append(resp.Groups, g)
		}
		return resp, nil
	}

	var wanted []offsets.TopicPartitions
	if req.Topics != nil || req.Version < 2 { // before v2 the list cannot be null
		wanted = make([]offsets.TopicPartitions, 0, len(req.Topics))
		for _, t := range req.Topics {
			wanted = append(wanted, offsets.TopicPartitions{Topic: t.Topic, Partitions: t.Partitions})
		}
	}
	found, code := b.fetchOffsets(cc, req.Group, wanted)
	partitionErr := int16(0)
	if code != 0 {
		if req.Version >= 2 {
			resp.ErrorCode = code
			return resp, nil
		}
		// v0-1 have no group-level error: like Kafka, report it on every requested partition.
		found, partitionErr = uncommitted(wanted), code
	}
	for _, t := range found {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p.Partition, p.Offset, p.LeaderEpoch
			rp.Metadata = kmsg.StringPtr(p.Metadata)
			rp.ErrorCode = partitionErr
			rt.Partitions = append(rt.Partitions, rp)
		}
		if err := listener.ReserveAnswer(ctx, rt); err != nil {
			return nil, err
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// fetchOffsets returns group's committed offsets for wanted (nil: everything committed), or
// the error code of the whole group.
func (b *Broker) fetchOffsets(cc *listener.ConnContext, group string, wanted []offsets.TopicPartitions) ([]offsets.TopicOffsets, int16) {
	if b.groups.offsets == nil {
		return nil, offsetsUnavailable.Code
	}
	if err := b.coordinatorError(cc, group); err != nil {
		return nil, err.Code
	}
	found, err := b.groups.offsets.Fetch(group, wanted)
	if err != nil {
		return nil, offsets.ErrorCode(err)
	}
	b.data.NoteCommittedPastEnd(group, found)
	return found, 0
}

// uncommitted is Kafka's "nothing committed" answer for every partition of wanted.
func uncommitted(wanted []offsets.TopicPartitions) []offsets.TopicOffsets {
	out := make([]offsets.TopicOffsets, 0, len(wanted))
	for _, t := range wanted {
		to := offsets.TopicOffsets{Topic: t.Topic}
		for _, p := range t.Partitions {
			to.Partitions = append(to.Partitions, offsets.PartitionOffset{Partition: p, Committed: offsets.Committed{Offset: -1, LeaderEpoch: -1}})
		}
		out = append(out, to)
	}
	return out
}
