package authorize

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/authz"
	"github.com/iggygw/iggy-gateway-kafka/internal/groupacl"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// TestRenderACLs: each permission is rendered at the level it was granted, through the topic
// map (Kafka names only), with the operations the authorization allows there; groups follow
// the group ACLs (the user-prefix default here, TestRenderGroupACLs for the rest).
func TestRenderACLs(t *testing.T) {
	m, err := topicmap.New("kafka", map[string]topicmap.Target{
		"billing-events": {Stream: "billing", Topic: "events"},
		"billing-audit":  {Stream: "billing", Topic: "audit"},
		"renamed":        {Stream: "kafka", Topic: "iggy-name"},
	})
	if err != nil {
		t.Fatal(err)
	}
	const own = "GROUP u. PREFIXED User:u READ,DELETE,DESCRIBE"
	tests := []struct {
		name   string
		grants *authz.Grants
		want   []string
	}{
		{"nothing", &authz.Grants{}, []string{own}},
		{"global poll and server reads", &authz.Grants{Global: iggy.GlobalPermissions{PollMessages: true, ReadServers: true}}, []string{
			"TOPIC * LITERAL User:u READ,DESCRIBE,DESCRIBE_CONFIGS",
			own,
			"CLUSTER kafka-cluster LITERAL User:u DESCRIBE,DESCRIBE_CONFIGS",
		}},
		{"send on the default stream", &authz.Grants{Streams: map[string]authz.StreamGrants{"kafka": {SendMessages: true}}}, []string{
			"TOPIC * LITERAL User:u WRITE,DESCRIBE,DESCRIBE_CONFIGS",
			own,
			"CLUSTER kafka-cluster LITERAL User:u IDEMPOTENT_WRITE",
		}},
		{"read on another stream: its mapped names", &authz.Grants{Streams: map[string]authz.StreamGrants{"billing": {ReadStream: true}}}, []string{
			"TOPIC billing-audit LITERAL User:u READ,DESCRIBE,DESCRIBE_CONFIGS",
			"TOPIC billing-events LITERAL User:u READ,DESCRIBE,DESCRIBE_CONFIGS",
			own,
		}},
		{"topic grants under their Kafka names; unmapped ones left out", &authz.Grants{Streams: map[string]authz.StreamGrants{
			"billing":  {Topics: map[string]authz.TopicGrants{"events": {SendMessages: true}, "unmapped": {PollMessages: true}}},
			"kafka":    {Topics: map[string]authz.TopicGrants{"iggy-name": {ManageTopic: true}, "renamed": {PollMessages: true}}},
			"unmapped": {ManageStream: true},
		}}, []string{
			"TOPIC billing-events LITERAL User:u WRITE,DESCRIBE,DESCRIBE_CONFIGS",
			"TOPIC renamed LITERAL User:u READ,WRITE,DELETE,ALTER,DESCRIBE,DESCRIBE_CONFIGS,ALTER_CONFIGS",
			own,
			"CLUSTER kafka-cluster LITERAL User:u IDEMPOTENT_WRITE",
		}},
		{"global and default stream merge into the wildcard", &authz.Grants{
			Global:  iggy.GlobalPermissions{SendMessages: true},
			Streams: map[string]authz.StreamGrants{"kafka": {ManageTopics: true}},
		}, []string{
			"TOPIC * LITERAL User:u READ,WRITE,CREATE,DELETE,ALTER,DESCRIBE,DESCRIBE_CONFIGS,ALTER_CONFIGS",
			own,
			"CLUSTER kafka-cluster LITERAL User:u IDEMPOTENT_WRITE",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renderedLines(renderACLs("u", tt.grants, m, nil))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// renderedLines flattens bindings to "TYPE name PATTERN principal OPS" lines, one per
// resource and principal, in the order DescribeAcls answers.
func renderedLines(b aclBindings) []string {
	var lines []string
	for _, r := range b.sorted() {
		var cur string
		var ops []string
		flush := func() {
			if ops != nil {
				lines = append(lines, r.typ.String()+" "+r.name+" "+r.pattern.String()+" "+cur+" "+strings.Join(ops, ","))
			}
		}
		for _, e := range b[r] {
			if e.principal != cur {
				flush()
				cur, ops = e.principal, nil
			}
			ops = append(ops, e.op.String())
		}
		flush()
	}
	return lines
}

// TestRenderGroupACLs: the group bindings shown are the ones groups.go enforces: the file's
// bindings for the user and for every user, as written, and the default's.
func TestRenderGroupACLs(t *testing.T) {
	m, err := topicmap.New("kafka", nil)
	if err != nil {
		t.Fatal(err)
	}
	bindings := []groupacl.Binding{
		{Principal: "alice", Group: "payments", Ops: groupacl.Read},
		{Principal: "alice", Group: "audit-", Prefixed: true, Ops: groupacl.Describe | groupacl.Delete},
		{Principal: "*", Group: "shared", Ops: groupacl.All},
		{Principal: "bob", Group: "bobs", Ops: groupacl.Read},
	}
	poller := &authz.Grants{Streams: map[string]authz.StreamGrants{"kafka": {PollMessages: true}}}
	fileLines := []string{
		"GROUP audit- PREFIXED User:alice DELETE,DESCRIBE",
		"GROUP payments LITERAL User:alice READ",
		"GROUP shared LITERAL User:* READ,DELETE,DESCRIBE",
	}
	tests := []struct {
		name   string
		def    groupacl.Default
		grants *authz.Grants
		want   []string
	}{
		{"user-prefix", groupacl.UserPrefix, poller, append([]string{"GROUP alice. PREFIXED User:alice READ,DELETE,DESCRIBE"}, fileLines...)},
		{"none", groupacl.None, poller, fileLines},
		{"all", groupacl.AllowAll, &authz.Grants{}, append([]string{"GROUP * LITERAL User:alice READ,DELETE,DESCRIBE"}, fileLines...)},
		{"topics, polls", groupacl.Topics, poller, append([]string{"GROUP * LITERAL User:alice READ,DELETE,DESCRIBE"}, fileLines...)},
		{"topics, polls nothing", groupacl.Topics, &authz.Grants{}, fileLines},
		{"manage_servers", groupacl.None, &authz.Grants{Global: iggy.GlobalPermissions{ManageServers: true}}, append([]string{"GROUP * LITERAL User:alice READ,DELETE,DESCRIBE"}, fileLines...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := groupacl.NewPolicy(tt.def, bindings)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range renderedLines(renderACLs("alice", tt.grants, m, p)) {
				if strings.HasPrefix(l, "GROUP ") {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestACLResourceFilter follows Kafka's ResourcePatternFilter semantics.
func TestACLResourceFilter(t *testing.T) {
	literal := aclResource{kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral}
	wildcard := aclResource{kmsg.ACLResourceTypeTopic, aclWildcard, kmsg.ACLResourcePatternTypeLiteral}
	prefixed := aclResource{kmsg.ACLResourceTypeTopic, "ord", kmsg.ACLResourcePatternTypePrefixed}
	filter := func(typ kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType) *kmsg.DescribeACLsRequest {
		return &kmsg.DescribeACLsRequest{ResourceType: typ, ResourceName: name, ResourcePatternType: pt}
	}
	orders := kmsg.StringPtr("orders")
	tests := []struct {
		name string
		req  *kmsg.DescribeACLsRequest
		r    aclResource
		want bool
	}{
		{"any", filter(kmsg.ACLResourceTypeAny, nil, kmsg.ACLResourcePatternTypeAny), literal, true},
		{"other type", filter(kmsg.ACLResourceTypeGroup, nil, kmsg.ACLResourcePatternTypeAny), literal, false},
		{"literal exact", filter(kmsg.ACLResourceTypeTopic, orders, kmsg.ACLResourcePatternTypeLiteral), literal, true},
		{"literal not the wildcard", filter(kmsg.ACLResourceTypeTopic, orders, kmsg.ACLResourcePatternTypeLiteral), wildcard, false},
		{"any pattern, exact name", filter(kmsg.ACLResourceTypeTopic, orders, kmsg.ACLResourcePatternTypeAny), wildcard, false},
		{"match wildcard", filter(kmsg.ACLResourceTypeTopic, orders, kmsg.ACLResourcePatternTypeMatch), wildcard, true},
		{"match prefix", filter(kmsg.ACLResourceTypeTopic, orders, kmsg.ACLResourcePatternTypeMatch), prefixed, true},
		{"match other prefix", filter(kmsg.ACLResourceTypeTopic, kmsg.StringPtr("billing"), kmsg.ACLResourcePatternTypeMatch), prefixed, false},
		{"prefixed filter, literal binding", filter(kmsg.ACLResourceTypeTopic, nil, kmsg.ACLResourcePatternTypePrefixed), literal, false},
	}
	for _, tt := range tests {
		if got := aclResourceMatches(tt.req, tt.r); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
