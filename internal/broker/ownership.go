package broker

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// Gates of the requests that only one gateway of several may serve (docs/DEPLOYMENT.md):
// topic administration goes to the controller, group requests to the group's coordinator,
// Produce and Fetch to the partition's leader. The placement decides; with a single gateway
// every gate is open. Each handler calls its gate first and answers the Kafka error that
// makes the client look the owner up again.

// controllerRefusal answers a topic change (CreateTopics, DeleteTopics, CreatePartitions,
// AlterConfigs, IncrementalAlterConfigs) that this gateway may not make.
func (b *Broker) controllerRefusal() *apiError {
	if err := b.adminRefusal(); err != nil {
		return err
	}
	if c := b.placement.Controller(); c != b.nodeID() {
		return newAPIError(kerr.NotController, "gateway %d is the controller, this is gateway %d", c, b.nodeID())
	}
	return nil
}

// coordinatorError is nil when this gateway coordinates group now; else NOT_COORDINATOR, or
// COORDINATOR_LOAD_IN_PROGRESS while it is taking the group's coordinator-log partition over.
func (b *Broker) coordinatorError(cc *listener.ConnContext, group string) *kerr.Error {
	if b.placement.Coordinator(cc.Listener, group).ID != b.nodeID() {
		return kerr.NotCoordinator
	}
	if b.groups.offsets == nil {
		return nil
	}
	var ke *kerr.Error
	if err := b.groups.offsets.Serving(group); errors.As(err, &ke) {
		return ke
	}
	return nil
}

// groupRefusal answers a single-group request (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// OffsetCommit, OffsetDelete) that another gateway coordinates, or that waits for the load.
func groupRefusal(req kmsg.Request, err *kerr.Error) kmsg.Response {
	resp := req.ResponseKind()
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		r.ErrorCode = err.Code
	case *kmsg.SyncGroupResponse:
		r.ErrorCode = err.Code
	case *kmsg.HeartbeatResponse:
		r.ErrorCode = err.Code
	case *kmsg.LeaveGroupResponse:
		r.ErrorCode = err.Code
	case *kmsg.OffsetDeleteResponse:
		r.ErrorCode = err.Code
	case *kmsg.OffsetCommitResponse:
		for _, t := range req.(*kmsg.OffsetCommitRequest).Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, err.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	}
	return resp
}

// splitGroups separates the groups this gateway coordinates now from the others, which get
// their error.
func (b *Broker) splitGroups(cc *listener.ConnContext, names []string) (served []string, refused map[string]*kerr.Error) {
	for _, g := range names {
		if err := b.coordinatorError(cc, g); err != nil {
			if refused == nil {
				refused = make(map[string]*kerr.Error)
			}
			refused[g] = err
			continue
		}
		served = append(served, g)
	}
	return served, refused
}
