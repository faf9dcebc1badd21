package authorize

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/groupacl"
)

// Groups are authorized as Kafka authorizes its Group resource (docs/SECURITY.md, "Consumer
// groups"): READ to join a group, take part in it (sync, heartbeat, leave) and commit its
// offsets; DESCRIBE to find its coordinator, describe it, list it and fetch its offsets;
// DELETE to delete it or its offsets. Iggy has no permission on Kafka groups, so the
// operations come from the operator's group ACLs (internal/groupacl: bindings and a default,
// by default the groups named "<user>." and what follows), and a user with the global
// manage_servers permission (the root user has it) may do everything, as Kafka's super users.
// A user's access to a group never depends on what others did with it, so no tenant can lock
// another out of its groups. Committing, fetching and deleting offsets of a topic also needs
// poll on it (29), as Kafka asks READ (DESCRIBE to fetch) on the topic.
//
// Only the "topics" default (the rule of earlier versions) looks at a group's committed
// offsets: a user may then use a group when it may poll somewhere and may poll every topic the
// group has committed offsets for.

func init() {
	authorizeWith(kmsg.FindCoordinator, authorizeFindCoordinator)
	authorizeWith(kmsg.JoinGroup, func(c *Checker, _ context.Context, a *access, req *kmsg.JoinGroupRequest, next serveNext) (kmsg.Response, error) {
		if code := c.groupAllows(a, req.Group, groupacl.Read); code != 0 {
			resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
			resp.ErrorCode, resp.Generation = code, -1
			return resp, nil
		}
		return next(req)
	})
	authorizeWith(kmsg.SyncGroup, func(c *Checker, _ context.Context, a *access, req *kmsg.SyncGroupRequest, next serveNext) (kmsg.Response, error) {
		if code := c.groupAllows(a, req.Group, groupacl.Read); code != 0 {
			resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
			resp.ErrorCode = code
			return resp, nil
		}
		return next(req)
	})
	authorizeWith(kmsg.Heartbeat, func(c *Checker, _ context.Context, a *access, req *kmsg.HeartbeatRequest, next serveNext) (kmsg.Response, error) {
		if code := c.groupAllows(a, req.Group, groupacl.Read); code != 0 {
			resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
			resp.ErrorCode = code
			return resp, nil
		}
		return next(req)
	})
	authorizeWith(kmsg.LeaveGroup, func(c *Checker, _ context.Context, a *access, req *kmsg.LeaveGroupRequest, next serveNext) (kmsg.Response, error) {
		if code := c.groupAllows(a, req.Group, groupacl.Read); code != 0 {
			resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
			resp.ErrorCode = code
			return resp, nil
		}
		return next(req)
	})
	authorizeWith(kmsg.DescribeGroups, authorizeDescribeGroups)
	authorizeWith(kmsg.ListGroups, authorizeListGroups)
	authorizeWith(kmsg.DeleteGroups, authorizeDeleteGroups)
	authorizeWith(kmsg.OffsetCommit, authorizeOffsetCommit)
	authorizeWith(kmsg.OffsetFetch, authorizeOffsetFetch)
	authorizeWith(kmsg.OffsetDelete, authorizeOffsetDelete)
}

// groupAllows returns 0 when the user may do op on group, else the error code to answer:
// GROUP_AUTHORIZATION_FAILED, or (topics default only) COORDINATOR_LOAD_IN_PROGRESS while the
// committed offsets that decide it are still loading. A refusal is recorded, so that a
// manage_servers permission just granted works on the retry.
func (c *Checker) groupAllows(a *access, group string, op groupacl.Op) int16 {
	if c.groupGranted(a, group, op) {
		return 0
	}
	if c.acl.Fallback() == groupacl.Topics {
		return c.topicsRule(a, group)
	}
	a.check(false)
	return kerr.GroupAuthorizationFailed.Code
}

// groupGranted reports whether the Iggy permissions or the group ACLs give op on group.
func (c *Checker) groupGranted(a *access, group string, op groupacl.Op) bool {
	return a.grants.ManageServers() || c.acl.Allowed(a.user, group).Has(op)
}

// topicsRule is the topics default: every operation on a group whose committed topics the
// user may all poll, when it may poll somewhere.
func (c *Checker) topicsRule(a *access, group string) int16 {
	if !a.check(a.grants.PollsAnywhere()) {
		return kerr.GroupAuthorizationFailed.Code
	}
	if c.groups == nil {
		return 0
	}
	committed, err := c.groups.Fetch(group, nil)
	if err != nil {
		return kerr.CoordinatorLoadInProgress.Code
	}
	for _, t := range committed {
		if !a.canPoll(t.Topic) {
			return kerr.GroupAuthorizationFailed.Code
		}
	}
	return 0
}

func authorizeFindCoordinator(c *Checker, _ context.Context, a *access, req *kmsg.FindCoordinatorRequest, next serveNext) (kmsg.Response, error) {
	allows := func(key string) int16 { return c.groupAllows(a, key, groupacl.Describe) }
	switch {
	case req.Version > 0 && req.CoordinatorType == 1: // a transactional id (txn.go)
		allows = func(key string) int16 {
			if c.txnAllowed(a, key) {
				return 0
			}
			return kerr.TransactionalIDAuthorizationFailed.Code
		}
	case req.Version > 0 && req.CoordinatorType != 0:
		return next(req) // the handler refuses other types
	}
	if req.Version < 4 {
		if code := allows(req.CoordinatorKey); code != 0 {
			resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
			resp.ErrorCode, resp.NodeID, resp.Port = code, -1, -1
			return resp, nil
		}
		return next(req)
	}
	var refused []string
	req.CoordinatorKeys, refused = split(req.CoordinatorKeys, func(g string) bool { return allows(g) == 0 })
	return answerRefused(req, next, refused, func(fr *kmsg.FindCoordinatorResponse, g string) {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.NodeID, co.Port, co.ErrorCode = g, -1, -1, allows(g)
		fr.Coordinators = append(fr.Coordinators, co)
	})
}

func authorizeDescribeGroups(c *Checker, _ context.Context, a *access, req *kmsg.DescribeGroupsRequest, next serveNext) (kmsg.Response, error) {
	var refused []string
	req.Groups, refused = split(req.Groups, func(g string) bool { return c.groupAllows(a, g, groupacl.Describe) == 0 })
	return answerRefused(req, next, refused, func(dr *kmsg.DescribeGroupsResponse, g string) {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group, rg.ErrorCode = g, c.groupAllows(a, g, groupacl.Describe)
		dr.Groups = append(dr.Groups, rg)
	})
}

// authorizeListGroups lists every group to a user with read_servers or manage_servers (Kafka's
// DESCRIBE on the cluster) and, to others, only the groups they may describe. A group hidden by
// the ACLs is no refusal (Kafka filters silently) and does not ask for the grants to be read
// again.
func authorizeListGroups(c *Checker, _ context.Context, a *access, req *kmsg.ListGroupsRequest, next serveNext) (kmsg.Response, error) {
	resp, err := next(req)
	if err != nil || a.grants.ReadServers() {
		return resp, err
	}
	lr := inner(resp).(*kmsg.ListGroupsResponse)
	lr.Groups, _ = split(lr.Groups, func(g kmsg.ListGroupsResponseGroup) bool {
		if c.acl.Fallback() == groupacl.Topics && !c.groupGranted(a, g.Group, groupacl.Describe) {
			return c.topicsRule(a, g.Group) == 0
		}
		return c.groupGranted(a, g.Group, groupacl.Describe)
	})
	return resp, nil
}

func authorizeDeleteGroups(c *Checker, _ context.Context, a *access, req *kmsg.DeleteGroupsRequest, next serveNext) (kmsg.Response, error) {
	var refused []string
	req.Groups, refused = split(req.Groups, func(g string) bool { return c.groupAllows(a, g, groupacl.Delete) == 0 })
	return answerRefused(req, next, refused, func(dr *kmsg.DeleteGroupsResponse, g string) {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group, rg.ErrorCode = g, c.groupAllows(a, g, groupacl.Delete)
		dr.Groups = append(dr.Groups, rg)
	})
}

func authorizeOffsetCommit(c *Checker, _ context.Context, a *access, req *kmsg.OffsetCommitRequest, next serveNext) (kmsg.Response, error) {
	groupCode := c.groupAllows(a, req.Group, groupacl.Read)
	var refused []kmsg.OffsetCommitRequestTopic
	req.Topics, refused = split(req.Topics, func(t kmsg.OffsetCommitRequestTopic) bool { return groupCode == 0 && a.canPoll(t.Topic) })
	code := groupCode
	if code == 0 {
		code = kerr.TopicAuthorizationFailed.Code
	}
	answer := func(resp *kmsg.OffsetCommitResponse, rt kmsg.OffsetCommitRequestTopic) {
		t := kmsg.NewOffsetCommitResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewOffsetCommitResponseTopicPartition()
			p.Partition, p.ErrorCode = rp.Partition, code
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	if len(req.Topics) == 0 { // nothing left for the handler
		return answerRefused(req, func(kmsg.Request) (kmsg.Response, error) { return req.ResponseKind(), nil }, refused, answer)
	}
	return answerRefused(req, next, refused, answer)
}

// authorizeOffsetFetch answers, then removes what the user may not see: a refused group's
// offsets become its error, a named topic it may not poll gets 29 on each partition, and a
// listing of all the group's offsets omits such topics.
func authorizeOffsetFetch(c *Checker, _ context.Context, a *access, req *kmsg.OffsetFetchRequest, next serveNext) (kmsg.Response, error) {
	resp, err := next(req)
	if err != nil {
		return resp, err
	}
	or := inner(resp).(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for i := range or.Groups {
			g := &or.Groups[i]
			named := i < len(req.Groups) && req.Groups[i].Topics != nil
			if code := c.groupAllows(a, g.Group, groupacl.Describe); code != 0 {
				g.ErrorCode, g.Topics = code, nil
				continue
			}
			g.Topics = filterOffsetTopics(a, g.Topics, named, func(t *kmsg.OffsetFetchResponseGroupTopic) {
				for j := range t.Partitions {
					t.Partitions[j].ErrorCode, t.Partitions[j].Offset = kerr.TopicAuthorizationFailed.Code, -1
				}
			}, func(t kmsg.OffsetFetchResponseGroupTopic) string { return t.Topic })
		}
		return resp, nil
	}
	if code := c.groupAllows(a, req.Group, groupacl.Describe); code != 0 {
		or.ErrorCode = code
		for i := range or.Topics {
			for j := range or.Topics[i].Partitions {
				or.Topics[i].Partitions[j].ErrorCode, or.Topics[i].Partitions[j].Offset = code, -1
			}
		}
		if req.Version >= 2 {
			or.Topics = nil
		}
		return resp, nil
	}
	or.Topics = filterOffsetTopics(a, or.Topics, req.Topics != nil, func(t *kmsg.OffsetFetchResponseTopic) {
		for j := range t.Partitions {
			t.Partitions[j].ErrorCode, t.Partitions[j].Offset = kerr.TopicAuthorizationFailed.Code, -1
		}
	}, func(t kmsg.OffsetFetchResponseTopic) string { return t.Topic })
	return resp, nil
}

// filterOffsetTopics handles topics the user may not poll: marked refused when they were
// named in the request, dropped from a listing of everything.
func filterOffsetTopics[T any](a *access, topics []T, named bool, refuse func(*T), name func(T) string) []T {
	if !named {
		kept, _ := split(topics, func(t T) bool { return a.canPoll(name(t)) })
		return kept
	}
	for i := range topics {
		if !a.canPoll(name(topics[i])) {
			refuse(&topics[i])
		}
	}
	return topics
}

func authorizeOffsetDelete(c *Checker, _ context.Context, a *access, req *kmsg.OffsetDeleteRequest, next serveNext) (kmsg.Response, error) {
	if code := c.groupAllows(a, req.Group, groupacl.Delete); code != 0 {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		return resp, nil
	}
	var refused []kmsg.OffsetDeleteRequestTopic
	req.Topics, refused = split(req.Topics, func(t kmsg.OffsetDeleteRequestTopic) bool { return a.canPoll(t.Topic) })
	return answerRefused(req, next, refused, func(dr *kmsg.OffsetDeleteResponse, rt kmsg.OffsetDeleteRequestTopic) {
		t := kmsg.NewOffsetDeleteResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewOffsetDeleteResponseTopicPartition()
			p.Partition, p.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
			t.Partitions = append(t.Partitions, p)
		}
		dr.Topics = append(dr.Topics, t)
	})
}
