package authorize

import (
	"cmp"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/authz"
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
//   - GROUP "*" when the user may poll somewhere (group access also needs poll on the group's
//     topics, which no binding can express);
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

// aclBindings collects the operations granted per resource.
type aclBindings map[aclResource][]kmsg.ACLOperation

func (b aclBindings) add(typ kmsg.ACLResourceType, name string, ops []kmsg.ACLOperation) {
	if len(ops) == 0 {
		return
	}
	r := aclResource{typ, name, kmsg.ACLResourcePatternTypeLiteral}
	for _, op := range ops {
		if !slices.Contains(b[r], op) {
			b[r] = append(b[r], op)
		}
	}
}

// sorted returns the resources in a stable order (type, then name), operations sorted.
func (b aclBindings) sorted() []aclResource {
	rs := make([]aclResource, 0, len(b))
	for r, ops := range b {
		slices.Sort(ops)
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(x, y aclResource) int {
		return cmp.Or(cmp.Compare(x.typ, y.typ), cmp.Compare(x.name, y.name), cmp.Compare(x.pattern, y.pattern))
	})
	return rs
}

// renderACLs turns one user's permissions into bindings, Kafka names through m.
func renderACLs(g *authz.Grants, m *topicmap.Map) aclBindings {
	out := aclBindings{}
	if g == nil {
		return out
	}
	out.add(kmsg.ACLResourceTypeTopic, aclWildcard, topicOperations(&authz.Grants{Global: g.Global}, "", ""))
	for _, stream := range slices.Sorted(maps.Keys(g.Streams)) {
		sg := g.Streams[stream]
		onlyStream := &authz.Grants{Streams: map[string]authz.StreamGrants{stream: withoutTopics(sg)}}
		ops := topicOperations(onlyStream, stream, "")
		if stream == m.DefaultStream() {
			out.add(kmsg.ACLResourceTypeTopic, aclWildcard, ops)
		} else {
			for _, name := range m.KafkaNamesIn(stream) {
				out.add(kmsg.ACLResourceTypeTopic, name, ops)
			}
		}
		for topic, tg := range sg.Topics {
			name, ok := m.KafkaName(stream, topic)
			if !ok {
				continue
			}
			onlyTopic := &authz.Grants{Streams: map[string]authz.StreamGrants{stream: {Topics: map[string]authz.TopicGrants{topic: tg}}}}
			out.add(kmsg.ACLResourceTypeTopic, name, topicOperations(onlyTopic, stream, topic))
		}
	}
	if g.PollsAnywhere() {
		out.add(kmsg.ACLResourceTypeGroup, aclWildcard, []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete})
	}
	out.add(kmsg.ACLResourceTypeCluster, aclClusterName, clusterOperations(g))
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
