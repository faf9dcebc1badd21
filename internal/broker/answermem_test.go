package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A DescribeConfigs request naming a resource thousands of times would be answered with
// configs about 1000 times its size: the answer grows inside the request memory budget, and
// one that does not fit what one request may hold closes the connection; a request that fits
// is answered whole, before and after.
func TestDescribeConfigsAnswerWithinBudget(t *testing.T) {
	g := startGateway(t, gatewayOpts{env: []string{"IGGY_KAFKA_MAX_REQUEST_MEMORY=2MiB"}})
	cl, _ := g.kafka()
	describe := func(n int) (*kmsg.DescribeConfigsResponse, error) {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.IncludeDocumentation, req.IncludeSynonyms = true, true
		for range n {
			r := kmsg.NewDescribeConfigsRequestResource()
			r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, ""
			req.Resources = append(req.Resources, r)
		}
		return req.RequestWith(ctxT(t), cl)
	}
	for _, n := range []int{10, 5000, 10} {
		resp, err := describe(n)
		switch {
		case n > 10 && err == nil:
			t.Fatalf("%d resources answered (%d bytes) with a budget of 2 MiB", n, len(resp.AppendTo(nil)))
		case n <= 10 && err != nil:
			t.Fatalf("%d resources: %v", n, err)
		case n <= 10:
			for _, r := range resp.Resources {
				if r.ErrorCode != 0 || len(r.Configs) == 0 {
					t.Fatalf("%d resources: %+v", n, r)
				}
			}
		}
	}
}
