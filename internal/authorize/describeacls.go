package authorize

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclPrincipalPrefix is the principal type Kafka gives authenticated users.
const aclPrincipalPrefix = "User:"

// DescribeACLs answers user with its own Iggy permissions and the group ACLs that apply to it
// rendered as ALLOW bindings (aclbindings.go), narrowed by the request's filter as Kafka
// narrows its ACLs.
func (c *Checker) DescribeACLs(ctx context.Context, user string, req *kmsg.DescribeACLsRequest) (*kmsg.DescribeACLsResponse, error) {
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	if err := validateACLFilter(req); err != nil {
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, kmsg.StringPtr(err.Error())
		return resp, nil
	}
	g, err := c.grants.Grants(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("reading the permissions of %q from Iggy: %w", user, err)
	}
	bindings := renderACLs(user, g, c.topics, c.acl)
	for _, r := range bindings.sorted() {
		if !aclResourceMatches(req, r) {
			continue
		}
		res := kmsg.NewDescribeACLsResponseResource()
		res.ResourceType, res.ResourceName, res.ResourcePatternType = r.typ, r.name, r.pattern
		for _, e := range bindings[r] {
			if !aclEntryMatches(req, e.principal, e.op) {
				continue
			}
			acl := kmsg.NewDescribeACLsResponseResourceACL()
			acl.Principal, acl.Host, acl.Operation, acl.PermissionType = e.principal, aclWildcard, e.op, kmsg.ACLPermissionTypeAllow
			res.ACLs = append(res.ACLs, acl)
		}
		if len(res.ACLs) > 0 {
			resp.Resources = append(resp.Resources, res)
		}
	}
	return resp, nil
}

// validateACLFilter refuses UNKNOWN values, as Kafka does.
func validateACLFilter(req *kmsg.DescribeACLsRequest) error {
	switch {
	case req.ResourceType == kmsg.ACLResourceTypeUnknown:
		return fmt.Errorf("resource type %s is not a valid filter", req.ResourceType)
	case req.ResourcePatternType == kmsg.ACLResourcePatternTypeUnknown:
		return fmt.Errorf("pattern type %s is not a valid filter", req.ResourcePatternType)
	case req.Operation == kmsg.ACLOperationUnknown:
		return fmt.Errorf("operation %s is not a valid filter", req.Operation)
	case req.PermissionType == kmsg.ACLPermissionTypeUnknown:
		return fmt.Errorf("permission type %s is not a valid filter", req.PermissionType)
	}
	return nil
}

// aclResourceMatches applies the resource part of the filter with Kafka's semantics
// (ResourcePatternFilter): MATCH finds the bindings that apply to the named resource.
func aclResourceMatches(req *kmsg.DescribeACLsRequest, r aclResource) bool {
	if req.ResourceType != kmsg.ACLResourceTypeAny && req.ResourceType != r.typ {
		return false
	}
	pt := req.ResourcePatternType
	if pt != kmsg.ACLResourcePatternTypeAny && pt != kmsg.ACLResourcePatternTypeMatch && pt != r.pattern {
		return false
	}
	if req.ResourceName == nil {
		return true
	}
	name := *req.ResourceName
	if pt != kmsg.ACLResourcePatternTypeMatch {
		return name == r.name
	}
	switch r.pattern {
	case kmsg.ACLResourcePatternTypeLiteral:
		return name == r.name || r.name == aclWildcard
	case kmsg.ACLResourcePatternTypePrefixed:
		return strings.HasPrefix(name, r.name)
	}
	return false
}

// aclEntryMatches applies the principal, host, operation and permission parts of the filter to
// one of the caller's bindings (every binding allows from any host).
func aclEntryMatches(req *kmsg.DescribeACLsRequest, principal string, op kmsg.ACLOperation) bool {
	return (req.Principal == nil || *req.Principal == principal) &&
		(req.Host == nil || *req.Host == aclWildcard) &&
		(req.Operation == kmsg.ACLOperationAny || req.Operation == op) &&
		(req.PermissionType == kmsg.ACLPermissionTypeAny || req.PermissionType == kmsg.ACLPermissionTypeAllow)
}
