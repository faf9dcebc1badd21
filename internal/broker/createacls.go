package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.CreateACLs, route{
		serve:      typed((*Broker).createACLs),
		concurrent: true,
		// Errors are per creation only: an undecodable request closes the connection.
	})
}

// aclsLiveInIggy is the answer to every ACL change: the gateway keeps no ACLs of its own
// (docs/SECURITY.md, "Permissions as ACLs").
const aclsLiveInIggy = "the gateway keeps no ACLs: permissions live in Iggy; grant or revoke them there (Iggy's UpdatePermissions, from the Iggy CLI or an SDK), and consumer group ACLs in the gateway's GROUP_ACL_PATH file; DescribeAcls (kafka-acls --list) shows the result"

// createACLs refuses every creation: CreateAcls is advertised only so that Kafka tools get this
// message instead of an UnsupportedVersion error.
func (b *Broker) createACLs(_ context.Context, _ *listener.ConnContext, req *kmsg.CreateACLsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	for range req.Creations {
		r := kmsg.NewCreateACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(aclsLiveInIggy)
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}
