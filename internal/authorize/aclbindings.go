package authorize

import (
	"cmp"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/authz"
	"github.com/iggygw/iggy-gateway-kafka/internal/groupacl"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// Rendering Iggy permissions as Kafka ACL bindings for DescribeAcls (docs/SECURITY.md,
// "Permissions as ACLs"). Every binding is an ALLOW for the user on any host. Each Iggy
// permission is rendered at the level it was granted, and its operations are computed with the
// same inheritance rules the authorization uses (internal/authz), so a binding never shows more
// or less than the gateway enforces at that level:
//   - global permissions: TOPIC "*" (LITERAL, Kafka's wildcard);
//   - a stream permission on the default stream: TOPIC "*" as well, since every Kafka name not
//     listed in the topic map lives there; plus one LITERAL binding per topic-map name that
//     points into the stream (for a stream other than the default one, only those);
//   - a topic permission: a LITERAL binding for the Kafka name the topic is visible under;
//     topics and streams no Kafka name resolves to are left out;
//   - groups (groups.go): the bindings of the group ACL file for the user (User:<name>) and for
//     every user (User:*), LITERAL or PREFIXED as written; the default's binding for the user
//     (PREFIXED "<user>." for user-prefix, GROUP "*" for all, and for topics GROUP "*" when it
//     may poll somewhere, an approximation: that rule also asks poll on the group's topics);
//     GROUP "*" for manage_servers;
//   - CLUSTER "kafka-cluster" for the server permissions and idempotent writes.

// aclWildcard is Kafka's name for "every resource" in a LITERAL binding.
const aclWildcard = "*"

// aclClusterName is the only cluster resource name Kafka has.
const aclClusterName = "kafka-cluster"

// aclResource is a resource pattern of a binding.
type aclResource struct {
	typ     kmsg.ACLResourceType
	name    string
	pattern kmsg.ACLResourcePatternType
}

// aclEntry is one operation granted to a principal ("User:<name>" or "User:*").
type aclEntry struct {
	principal string
	op        kmsg.ACLOperation
}

// aclBindings collects the entries granted per resource.
type aclBindings map[aclResource][]aclEntry

// add grants ops on a LITERAL resource to principal.
func (b aclBindings) add(principal string, typ kmsg.ACLResourceType, name string, ops []kmsg.ACLOperation) {
	b.addPattern(principal, aclResource{typ, name, kmsg.ACLResourcePatternTypeLiteral}, ops)
}

func (b aclBindings) addPattern(principal string, r aclResource, ops []kmsg.ACLOperation) {
	for _, op := range ops {
		e := aclEntry{principal, op}
		if !slices.Contains(b[r], e) {
			b[r] = append(b[r], e)
		}
	}
}

// sorted returns the resources in a stable order (type, then name, then pattern), their
// entries sorted by principal and operation.
func (b aclBindings) sorted() []aclResource {
	rs := make([]aclResource, 0, len(b))
	for r, es := range b {
		slices.SortFunc(es, func(x, y aclEntry) int {
			return cmp.Or(cmp.Compare(x.principal, y.principal), cmp.Compare(x.op, y.op))
		})
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(x, y aclResource) int {
		return cmp.Or(cmp.Compare(x.typ, y.typ), cmp.Compare(x.name, y.name), cmp.Compare(x.pattern, y.pattern))
	})
	return rs
}

// renderACLs turns one user's permissions and group ACLs into bindings, Kafka names through m.
func renderACLs(user string, g *authz.Grants, m *topicmap.Map, acl *groupacl.Policy) aclBindings {
	out := aclBindings{}
	renderGroupACLs(out, user, g, acl)
	if g == nil {
		return out
	}
	principal := aclPrincipalPrefix + user
	out.add(principal, kmsg.ACLResourceTypeTopic, aclWildcard, topicOperations(&authz.Grants{Global: g.Global}, "", ""))
	for _, stream := range slices.Sorted(maps.Keys(g.Streams)) {
		sg := g.Streams[stream]
		onlyStream := &authz.Grants{Streams: map[string]authz.StreamGrants{stream: withoutTopics(sg)}}
		ops := topicOperations(onlyStream, stream, "")
		if stream == m.DefaultStream() {
			out.add(principal, kmsg.ACLResourceTypeTopic, aclWildcard, ops)
		} else {
			for _, name := range m.KafkaNamesIn(stream) {
				out.add(principal, kmsg.ACLResourceTypeTopic, name, ops)
			}
		}
		for topic, tg := range sg.Topics {
			name, ok := m.KafkaName(stream, topic)
			if !ok {
				continue
			}
			onlyTopic := &authz.Grants{Streams: map[string]authz.StreamGrants{stream: {Topics: map[string]authz.TopicGrants{topic: tg}}}}
			out.add(principal, kmsg.ACLResourceTypeTopic, name, topicOperations(onlyTopic, stream, topic))
		}
	}
	out.add(principal, kmsg.ACLResourceTypeCluster, aclClusterName, clusterOperations(g))
	return out
}

// everyGroupOperation is what the defaults and manage_servers grant on a group.
var everyGroupOperation = []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete}

// renderGroupACLs adds the group bindings that apply to user (groups.go decides with the
// same policy and grants).
func renderGroupACLs(out aclBindings, user string, g *authz.Grants, acl *groupacl.Policy) {
	principal := aclPrincipalPrefix + user
	switch {
	case g.ManageServers(), acl.Fallback() == groupacl.AllowAll,
		acl.Fallback() == groupacl.Topics && g.PollsAnywhere():
		out.add(principal, kmsg.ACLResourceTypeGroup, aclWildcard, everyGroupOperation)
	}
	if acl.Fallback() == groupacl.UserPrefix {
		own := aclResource{kmsg.ACLResourceTypeGroup, groupacl.OwnPrefix(user), kmsg.ACLResourcePatternTypePrefixed}
		out.addPattern(principal, own, everyGroupOperation)
	}
	for _, b := range acl.For(user) {
		r := aclResource{kmsg.ACLResourceTypeGroup, b.Group, kmsg.ACLResourcePatternTypeLiteral}
		if b.Prefixed {
			r.pattern = kmsg.ACLResourcePatternTypePrefixed
		}
		out.addPattern(aclPrincipalPrefix+b.Principal, r, groupOperations(b.Ops))
	}
}

// groupOperations are the Kafka operations of a binding, as written (Kafka shows a READ
// binding as READ; the DESCRIBE it implies is not a binding).
func groupOperations(ops groupacl.Op) []kmsg.ACLOperation {
	var out []kmsg.ACLOperation
	for _, o := range []struct {
		op  groupacl.Op
		acl kmsg.ACLOperation
	}{{groupacl.Read, kmsg.ACLOperationRead}, {groupacl.Describe, kmsg.ACLOperationDescribe}, {groupacl.Delete, kmsg.ACLOperationDelete}} {
		if ops.Has(o.op) {
			out = append(out, o.acl)
		}
	}
	return out
}

// topicOperations are the Kafka operations g allows on Iggy topic (stream, topic), following
// the authorization rules (docs/SECURITY.md, "Authorization").
func topicOperations(g *authz.Grants, stream, topic string) []kmsg.ACLOperation {
	var ops []kmsg.ACLOperation
	if g.Poll(stream, topic) {
		ops = append(ops, kmsg.ACLOperationRead)
	}
	if g.Send(stream, topic) {
		ops = append(ops, kmsg.ACLOperationWrite)
	}
	if g.CreateTopic(stream) {
		ops = append(ops, kmsg.ACLOperationCreate)
	}
	if g.ManageTopic(stream, topic) {
		ops = append(ops, kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationAlterConfigs)
	}
	if g.Describe(stream, topic) {
		ops = append(ops, kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs)
	}
	return ops
}

// clusterOperations: broker configurations follow the server permissions, idempotent
// producers need send somewhere.
func clusterOperations(g *authz.Grants) []kmsg.ACLOperation {
	var ops []kmsg.ACLOperation
	if g.ReadServers() {
		ops = append(ops, kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs)
	}
	if g.ManageServers() {
		ops = append(ops, kmsg.ACLOperationAlter, kmsg.ACLOperationAlterConfigs)
	}
	if g.SendsAnywhere() {
		ops = append(ops, kmsg.ACLOperationIdempotentWrite)
	}
	return ops
}

func withoutTopics(sg authz.StreamGrants) authz.StreamGrants {
	sg.Topics = nil
	return sg
}
