package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A DescribeConfigs request naming a resource thousands of times would be answered with
// configs about 100 times its size: the answer grows inside the request memory budget, and
// the resources past what one request may hold are answered INVALID_REQUEST without configs.
func TestDescribeConfigsAnswerWithinBudget(t *testing.T) {
	const budget = 2 << 20
	g := startGateway(t, gatewayOpts{env: []string{"IGGY_KAFKA_MAX_REQUEST_MEMORY=2MiB"}})
	cl, _ := g.kafka()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeDocumentation, req.IncludeSynonyms = true, true
	for range 5000 {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, ""
		req.Resources = append(req.Resources, r)
	}
	resp, err := req.RequestWith(ctxT(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Resources) != len(req.Resources) {
		t.Fatalf("%d resources answered of %d", len(resp.Resources), len(req.Resources))
	}
	answered, refused := 0, 0
	for i, r := range resp.Resources {
		switch {
		case r.ErrorCode == 0 && len(r.Configs) > 0 && refused == 0:
			answered++
		case r.ErrorCode == kerr.InvalidRequest.Code && len(r.Configs) == 0:
			refused++
		default:
			t.Fatalf("resource %d: error %d with %d configs after %d answered, %d refused", i, r.ErrorCode, len(r.Configs), answered, refused)
		}
	}
	if answered == 0 || refused == 0 {
		t.Fatalf("%d answered, %d refused", answered, refused)
	}
	if size := len(resp.AppendTo(nil)); size > budget {
		t.Fatalf("answer of %d bytes with a budget of %d", size, budget)
	}
	// The next request is served: the answer's memory went back to the budget.
	one := kmsg.NewPtrDescribeConfigsRequest()
	one.Resources = req.Resources[:1]
	again, err := one.RequestWith(ctxT(t), cl)
	if err != nil || again.Resources[0].ErrorCode != 0 {
		t.Fatalf("after: %v %+v", err, again)
	}
}
