package auth_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeACLs asks for the bindings matching the filter (nil: everything) and flattens them
// to "TYPE name PATTERN principal OPERATION" lines.
func describeACLs(ctx context.Context, t *testing.T, cl *kgo.Client, filter func(*kmsg.DescribeACLsRequest)) ([]string, *kmsg.DescribeACLsResponse) {
	t.Helper()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	if filter != nil {
		filter(req)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range resp.Resources {
		for _, a := range r.ACLs {
			if a.PermissionType != kmsg.ACLPermissionTypeAllow || a.Host != "*" {
				t.Errorf("binding %+v is not an ALLOW from any host", a)
			}
			lines = append(lines, strings.Join([]string{r.ResourceType.String(), r.ResourceName, r.ResourcePatternType.String(), a.Principal, a.Operation.String()}, " "))
		}
	}
	return lines, resp
}

func bindings(resource, principal string, ops ...string) []string {
	var out []string
	for _, op := range ops {
		out = append(out, resource+" "+principal+" "+op)
	}
	return out
}

// TestDescribeACLs: each user sees its own Iggy permissions as bindings, filters narrow them,
// ACL changes are refused with a message pointing to Iggy, and anonymous connections get
// SECURITY_DISABLED.
func TestDescribeACLs(t *testing.T) {
	g, carol, _ := startTenants(t)
	ctx := ctxT(t)

	// carol manages one topic of the default stream.
	got, _ := describeACLs(ctx, t, carol.cl, nil)
	want := slices.Concat(
		bindings("TOPIC carol-orders LITERAL", "User:carol", "READ", "WRITE", "DELETE", "ALTER", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"),
		bindings("GROUP carol. PREFIXED", "User:carol", "READ", "DELETE", "DESCRIBE"),
		bindings("CLUSTER kafka-cluster LITERAL", "User:carol", "IDEMPOTENT_WRITE"),
	)
	if !slices.Equal(got, want) {
		t.Errorf("carol's ACLs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// alice manages the default stream: the wildcard, with CREATE.
	alice := g.kafka("SASL_PLAINTEXT", plainAuth("alice", "alice-secret"))
	got, _ = describeACLs(ctx, t, alice, func(r *kmsg.DescribeACLsRequest) { r.ResourceType = kmsg.ACLResourceTypeTopic })
	want = bindings("TOPIC * LITERAL", "User:alice", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS")
	if !slices.Equal(got, want) {
		t.Errorf("alice's topic ACLs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	filters := []struct {
		name   string
		filter func(*kmsg.DescribeACLsRequest)
		want   []string
	}{
		{"MATCH finds the wildcard", func(r *kmsg.DescribeACLsRequest) {
			r.ResourceType, r.ResourceName, r.ResourcePatternType = kmsg.ACLResourceTypeTopic, kmsg.StringPtr("carol-orders"), kmsg.ACLResourcePatternTypeMatch
			r.Operation = kmsg.ACLOperationWrite
		}, []string{"TOPIC * LITERAL User:alice WRITE"}},
		{"LITERAL name is exact", func(r *kmsg.DescribeACLsRequest) {
			r.ResourceName, r.ResourcePatternType = kmsg.StringPtr("carol-orders"), kmsg.ACLResourcePatternTypeLiteral
		}, nil},
		{"another principal", func(r *kmsg.DescribeACLsRequest) { r.Principal = kmsg.StringPtr("User:carol") }, nil},
		{"DENY", func(r *kmsg.DescribeACLsRequest) { r.PermissionType = kmsg.ACLPermissionTypeDeny }, nil},
		{"PREFIXED: alice's own groups", func(r *kmsg.DescribeACLsRequest) { r.ResourcePatternType = kmsg.ACLResourcePatternTypePrefixed },
			bindings("GROUP alice. PREFIXED", "User:alice", "READ", "DELETE", "DESCRIBE")},
		{"MATCH finds the prefix of a group", func(r *kmsg.DescribeACLsRequest) {
			r.ResourceType, r.ResourceName, r.ResourcePatternType = kmsg.ACLResourceTypeGroup, kmsg.StringPtr("alice.app"), kmsg.ACLResourcePatternTypeMatch
			r.Operation = kmsg.ACLOperationRead
		}, []string{"GROUP alice. PREFIXED User:alice READ"}},
		{"MATCH, another tenant's group", func(r *kmsg.DescribeACLsRequest) {
			r.ResourceType, r.ResourceName, r.ResourcePatternType = kmsg.ACLResourceTypeGroup, kmsg.StringPtr("carol.app"), kmsg.ACLResourcePatternTypeMatch
		}, nil},
		{"cluster", func(r *kmsg.DescribeACLsRequest) {
			r.ResourceType, r.Principal, r.Host = kmsg.ACLResourceTypeCluster, kmsg.StringPtr("User:alice"), kmsg.StringPtr("*")
		}, []string{"CLUSTER kafka-cluster LITERAL User:alice IDEMPOTENT_WRITE"}},
	}
	for _, f := range filters {
		if got, _ := describeACLs(ctx, t, alice, f.filter); !slices.Equal(got, f.want) {
			t.Errorf("%s: %v, want %v", f.name, got, f.want)
		}
	}
	if _, resp := describeACLs(ctx, t, alice, func(r *kmsg.DescribeACLsRequest) { r.Operation = kmsg.ACLOperationUnknown }); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("UNKNOWN operation filter: error %d, want 42", resp.ErrorCode)
	}

	// ACL changes are refused, saying where permissions live.
	create := kmsg.NewPtrCreateACLsRequest()
	create.Creations = append(create.Creations, kmsg.NewCreateACLsRequestCreation())
	cresp, err := create.RequestWith(ctx, carol.cl)
	if err != nil || len(cresp.Results) != 1 || cresp.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code ||
		cresp.Results[0].ErrorMessage == nil || !strings.Contains(*cresp.Results[0].ErrorMessage, "permissions live in Iggy") || !strings.Contains(*cresp.Results[0].ErrorMessage, "GROUP_ACL_PATH") {
		t.Errorf("CreateAcls: %+v %v", cresp, err)
	}
	del := kmsg.NewPtrDeleteACLsRequest()
	del.Filters = append(del.Filters, kmsg.NewDeleteACLsRequestFilter())
	dresp, err := del.RequestWith(ctx, carol.cl)
	if err != nil || len(dresp.Results) != 1 || dresp.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("DeleteAcls: %+v %v", dresp, err)
	}
}

// TestDescribeACLsAnonymous: a PLAINTEXT connection has no per-user checks to describe.
func TestDescribeACLsAnonymous(t *testing.T) {
	g := startSecure(t, []string{"PLAINTEXT"})
	_, resp := describeACLs(ctxT(t), t, g.kafka("PLAINTEXT"), nil)
	if resp.ErrorCode != kerr.SecurityDisabled.Code || len(resp.Resources) != 0 {
		t.Fatalf("anonymous DescribeAcls: %+v, want 54", resp)
	}
}
