package authorize

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Metadata lists only topics the user may describe (any permission on them); an explicitly
// named topic it may not describe gets TOPIC_AUTHORIZATION_FAILED (29), and a listing of all
// topics omits it silently, as Kafka does. Topic administration needs manage: creating needs
// manage_topics on the stream (or manage_streams, or the global flags), deleting and changing
// a topic manage on the topic; broker configurations need the server flags (31).

func init() {
	authorizeWith(kmsg.Metadata, authorizeMetadata)
	authorizeWith(kmsg.CreateTopics, authorizeCreateTopics)
	authorizeWith(kmsg.DeleteTopics, authorizeDeleteTopics)
	authorizeWith(kmsg.CreatePartitions, authorizeCreatePartitions)
	authorizeWith(kmsg.DescribeConfigs, authorizeDescribeConfigs)
	authorizeWith(kmsg.AlterConfigs, authorizeAlterConfigs)
	authorizeWith(kmsg.IncrementalAlterConfigs, authorizeIncrementalAlterConfigs)
	authorizeWith(kmsg.InitProducerID, authorizeInitProducerID)
}

func authorizeMetadata(_ *Checker, _ context.Context, a *access, req *kmsg.MetadataRequest, next serveNext) (kmsg.Response, error) {
	if req.Topics == nil { // all topics
		resp, err := next(req)
		if err != nil {
			return resp, err
		}
		mr := inner(resp).(*kmsg.MetadataResponse)
		mr.Topics, _ = split(mr.Topics, func(t kmsg.MetadataResponseTopic) bool {
			return t.Topic == nil || a.grants.Describe(a.target(*t.Topic).Stream, a.target(*t.Topic).Topic)
		})
		return resp, nil
	}
	var refused []kmsg.MetadataRequestTopic
	req.Topics, refused = split(req.Topics, func(t kmsg.MetadataRequestTopic) bool { return t.Topic == nil || a.canDescribe(*t.Topic) })
	// Auto-creation needs what CreateTopics needs: without it a missing topic is
	// UNKNOWN_TOPIC_OR_PARTITION, as Kafka answers a user who may describe but not create.
	for _, t := range req.Topics {
		if t.Topic != nil && !a.grants.CreateTopic(a.target(*t.Topic).Stream) {
			req.AllowAutoTopicCreation = false
		}
	}
	resp, err := answerRefused(req, next, refused, func(mr *kmsg.MetadataResponse, rt kmsg.MetadataRequestTopic) {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic, t.ErrorCode = rt.Topic, kerr.TopicAuthorizationFailed.Code
		mr.Topics = append(mr.Topics, t)
	})
	if err != nil || resp == nil || !slices.ContainsFunc(req.Topics, func(t kmsg.MetadataRequestTopic) bool { return t.Topic == nil }) {
		return resp, err
	}
	// A topic looked up by id is checked once its name is known: as Kafka, the answer for a
	// topic the user may not describe is TOPIC_AUTHORIZATION_FAILED without name or partitions.
	mr := inner(resp).(*kmsg.MetadataResponse)
	for i := range mr.Topics {
		t := &mr.Topics[i]
		if t.Topic != nil && t.ErrorCode == 0 && !a.canDescribe(*t.Topic) {
			t.Topic, t.Partitions, t.ErrorCode = nil, nil, kerr.TopicAuthorizationFailed.Code
		}
	}
	return resp, nil
}

func authorizeCreateTopics(_ *Checker, _ context.Context, a *access, req *kmsg.CreateTopicsRequest, next serveNext) (kmsg.Response, error) {
	var refused []kmsg.CreateTopicsRequestTopic
	req.Topics, refused = split(req.Topics, func(t kmsg.CreateTopicsRequestTopic) bool { return a.canCreate(t.Topic) })
	return answerRefused(req, next, refused, func(cr *kmsg.CreateTopicsResponse, rt kmsg.CreateTopicsRequestTopic) {
		t := kmsg.NewCreateTopicsResponseTopic()
		t.Topic, t.ErrorCode = rt.Topic, kerr.TopicAuthorizationFailed.Code
		t.ErrorMessage = kmsg.StringPtr("creating this topic needs manage_topics on its Iggy stream")
		cr.Topics = append(cr.Topics, t)
	})
}

func authorizeDeleteTopics(_ *Checker, _ context.Context, a *access, req *kmsg.DeleteTopicsRequest, next serveNext) (kmsg.Response, error) {
	var refusedNames []string
	// v0–5 name topics in TopicNames, v6 in Topics (a topic id alone is refused by the
	// handler: this gateway has no topic ids).
	req.TopicNames, refusedNames = split(req.TopicNames, a.canManage)
	var refused []kmsg.DeleteTopicsRequestTopic
	req.Topics, refused = split(req.Topics, func(t kmsg.DeleteTopicsRequestTopic) bool { return t.Topic == nil || a.canManage(*t.Topic) })
	for _, t := range refused {
		refusedNames = append(refusedNames, *t.Topic)
	}
	return answerRefused(req, next, refusedNames, func(dr *kmsg.DeleteTopicsResponse, name string) {
		t := kmsg.NewDeleteTopicsResponseTopic()
		t.Topic, t.ErrorCode = kmsg.StringPtr(name), kerr.TopicAuthorizationFailed.Code
		dr.Topics = append(dr.Topics, t)
	})
}

func authorizeCreatePartitions(_ *Checker, _ context.Context, a *access, req *kmsg.CreatePartitionsRequest, next serveNext) (kmsg.Response, error) {
	var refused []kmsg.CreatePartitionsRequestTopic
	req.Topics, refused = split(req.Topics, func(t kmsg.CreatePartitionsRequestTopic) bool { return a.canManage(t.Topic) })
	return answerRefused(req, next, refused, func(cr *kmsg.CreatePartitionsResponse, rt kmsg.CreatePartitionsRequestTopic) {
		t := kmsg.NewCreatePartitionsResponseTopic()
		t.Topic, t.ErrorCode = rt.Topic, kerr.TopicAuthorizationFailed.Code
		cr.Topics = append(cr.Topics, t)
	})
}

// configAccess decides one config resource: a topic needs describe (read) or manage (write),
// the broker the server flags. It returns 0 or the error code to answer.
func (a *access) configAccess(typ kmsg.ConfigResourceType, name string, write bool) int16 {
	switch {
	case typ == kmsg.ConfigResourceTypeTopic && write:
		if !a.canManage(name) {
			return kerr.TopicAuthorizationFailed.Code
		}
	case typ == kmsg.ConfigResourceTypeTopic:
		if !a.canDescribe(name) {
			return kerr.TopicAuthorizationFailed.Code
		}
	case write:
		if !a.check(a.grants.ManageServers()) {
			return kerr.ClusterAuthorizationFailed.Code
		}
	default:
		if !a.check(a.grants.ReadServers()) {
			return kerr.ClusterAuthorizationFailed.Code
		}
	}
	return 0
}

// configRefusal is a refused config resource.
type configRefusal struct {
	typ  kmsg.ConfigResourceType
	name string
	code int16
}

// splitConfigs keeps the resources the user may access and lists the refused ones.
func splitConfigs[T any](a *access, items []T, key func(T) (kmsg.ConfigResourceType, string), write bool) ([]T, []configRefusal) {
	var refused []configRefusal
	kept, _ := split(items, func(it T) bool {
		typ, name := key(it)
		if code := a.configAccess(typ, name, write); code != 0 {
			refused = append(refused, configRefusal{typ, name, code})
			return false
		}
		return true
	})
	return kept, refused
}

func authorizeDescribeConfigs(_ *Checker, _ context.Context, a *access, req *kmsg.DescribeConfigsRequest, next serveNext) (kmsg.Response, error) {
	var refused []configRefusal
	req.Resources, refused = splitConfigs(a, req.Resources, func(r kmsg.DescribeConfigsRequestResource) (kmsg.ConfigResourceType, string) {
		return r.ResourceType, r.ResourceName
	}, false)
	return answerRefused(req, next, refused, func(dr *kmsg.DescribeConfigsResponse, r configRefusal) {
		res := kmsg.NewDescribeConfigsResponseResource()
		res.ResourceType, res.ResourceName, res.ErrorCode = r.typ, r.name, r.code
		dr.Resources = append(dr.Resources, res)
	})
}

func authorizeAlterConfigs(_ *Checker, _ context.Context, a *access, req *kmsg.AlterConfigsRequest, next serveNext) (kmsg.Response, error) {
	var refused []configRefusal
	req.Resources, refused = splitConfigs(a, req.Resources, func(r kmsg.AlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
		return r.ResourceType, r.ResourceName
	}, true)
	return answerRefused(req, next, refused, func(ar *kmsg.AlterConfigsResponse, r configRefusal) {
		res := kmsg.NewAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName, res.ErrorCode = r.typ, r.name, r.code
		ar.Resources = append(ar.Resources, res)
	})
}

func authorizeIncrementalAlterConfigs(_ *Checker, _ context.Context, a *access, req *kmsg.IncrementalAlterConfigsRequest, next serveNext) (kmsg.Response, error) {
	var refused []configRefusal
	req.Resources, refused = splitConfigs(a, req.Resources, func(r kmsg.IncrementalAlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
		return r.ResourceType, r.ResourceName
	}, true)
	return answerRefused(req, next, refused, func(ir *kmsg.IncrementalAlterConfigsResponse, r configRefusal) {
		res := kmsg.NewIncrementalAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName, res.ErrorCode = r.typ, r.name, r.code
		ir.Resources = append(ir.Resources, res)
	})
}

// authorizeInitProducerID: an idempotent producer needs send on some topic (Kafka 2.8+ asks
// for WRITE on any topic); without it CLUSTER_AUTHORIZATION_FAILED (31).
// A transactional id needs what docs/SECURITY.md says of transactions (txn.go); without it
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53).
func authorizeInitProducerID(c *Checker, _ context.Context, a *access, req *kmsg.InitProducerIDRequest, next serveNext) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil && *req.TransactionalID != "" {
		if c.txnAllowed(a, *req.TransactionalID) {
			return next(req)
		}
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp, nil
	}
	if a.check(a.grants.SendsAnywhere()) {
		return next(req)
	}
	resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
	return resp, nil
}
