package authorize

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/authz"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// TestRenderACLs: each permission is rendered at the level it was granted, through the topic
// map (Kafka names only), with the operations the authorization allows there.
func TestRenderACLs(t *testing.T) {
	m, err := topicmap.New("kafka", map[string]topicmap.Target{
		"billing-events": {Stream: "billing", Topic: "events"},
		"billing-audit":  {Stream: "billing", Topic: "audit"},
		"renamed":        {Stream: "kafka", Topic: "iggy-name"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		grants *authz.Grants
		want   []string
	}{
		{"nothing", &authz.Grants{}, nil},
		{"global poll and server reads", &authz.Grants{Global: iggy.GlobalPermissions{PollMessages: true, ReadServers: true}}, []string{
			"TOPIC * READ,DESCRIBE,DESCRIBE_CONFIGS",
			"GROUP * READ,DELETE,DESCRIBE",
			"CLUSTER kafka-cluster DESCRIBE,DESCRIBE_CONFIGS",
		}},
		{"send on the default stream", &authz.Grants{Streams: map[string]authz.StreamGrants{"kafka": {SendMessages: true}}}, []string{
			"TOPIC * WRITE,DESCRIBE,DESCRIBE_CONFIGS",
			"CLUSTER kafka-cluster IDEMPOTENT_WRITE",
		}},
		{"read on another stream: its mapped names", &authz.Grants{Streams: map[string]authz.StreamGrants{"billing": {ReadStream: true}}}, []string{
			"TOPIC billing-audit READ,DESCRIBE,DESCRIBE_CONFIGS",
			"TOPIC billing-events READ,DESCRIBE,DESCRIBE_CONFIGS",
			"GROUP * READ,DELETE,DESCRIBE",
		}},
		{"topic grants under their Kafka names; unmapped ones left out", &authz.Grants{Streams: map[string]authz.StreamGrants{
			"billing":  {Topics: map[string]authz.TopicGrants{"events": {SendMessages: true}, "unmapped": {PollMessages: true}}},
			"kafka":    {Topics: map[string]authz.TopicGrants{"iggy-name": {ManageTopic: true}, "renamed": {PollMessages: true}}},
			"unmapped": {ManageStream: true},
		}}, []string{
			"TOPIC billing-events WRITE,DESCRIBE,DESCRIBE_CONFIGS",
			"TOPIC renamed READ,WRITE,DELETE,ALTER,DESCRIBE,DESCRIBE_CONFIGS,ALTER_CONFIGS",
			"GROUP * READ,DELETE,DESCRIBE",
			"CLUSTER kafka-cluster IDEMPOTENT_WRITE",
		}},
		{"global and default stream merge into the wildcard", &authz.Grants{
			Global:  iggy.GlobalPermissions{SendMessages: true},
			Streams: map[string]authz.StreamGrants{"kafka": {ManageTopics: true}},
		}, []string{
			"TOPIC * READ,WRITE,CREATE,DELETE,ALTER,DESCRIBE,DESCRIBE_CONFIGS,ALTER_CONFIGS",
			"GROUP * READ,DELETE,DESCRIBE",
			"CLUSTER kafka-cluster IDEMPOTENT_WRITE",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := renderACLs(tt.grants, m)
			var got []string
			for _, r := range b.sorted() {
				if r.pattern != kmsg.ACLResourcePatternTypeLiteral {
					t.Errorf("%v: pattern %v", r, r.pattern)
				}
				ops := make([]string, len(b[r]))
				for i, op := range b[r] {
					ops[i] = op.String()
				}
				got = append(got, r.typ.String()+" "+r.name+" "+strings.Join(ops, ","))
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
