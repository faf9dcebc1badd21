package broker

import (
	"context"
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/versions"
)

func init() {
	register(kmsg.ApiVersions, route{
		serve:      typed((*Broker).apiVersions),
		concurrent: true,
		invalid: func(req kmsg.Request) kmsg.Response {
			resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		},
	})
}

// clientSoftwareRE is KIP-511's rule for the client software name and version.
var clientSoftwareRE = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

// apiVersions advertises the table for the client's listener. It never carries finalized
// features: advertising transaction.version would let Java clients skip the transaction
// refusal.
func (b *Broker) apiVersions(_ context.Context, cc *listener.ConnContext, req *kmsg.ApiVersionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 {
		if !clientSoftwareRE.MatchString(req.ClientSoftwareName) || !clientSoftwareRE.MatchString(req.ClientSoftwareVersion) {
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp, nil
		}
		cc.SetClientSoftware(req.ClientSoftwareName, req.ClientSoftwareVersion)
	}
	resp.ApiKeys = versions.Advertised(b.sasl(cc))
	return resp, nil
}

// serveUnsupportedAPIVersions answers ApiVersions at a version the gateway does not speak with
// a v0 body, UNSUPPORTED_VERSION and the full list, so the client can pick a version (KIP-511).
func (b *Broker) serveUnsupportedAPIVersions(_ context.Context, cc *listener.ConnContext, _ kmsg.Request) (kmsg.Response, error) {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ApiKeys = versions.Advertised(b.sasl(cc))
	return resp, nil
}
