package authorize

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/groupacl"
)

// The consumer group protocol (KIP-848) follows the group rules of groups.go: READ on the
// group to take part (ConsumerGroupHeartbeat), DESCRIBE to describe it. As in Kafka, a member
// must also be allowed to describe every topic it subscribes to by name
// (TOPIC_AUTHORIZATION_FAILED otherwise).

func init() {
	authorizeWith(kmsg.ConsumerGroupHeartbeat, func(c *Checker, _ context.Context, a *access, req *kmsg.ConsumerGroupHeartbeatRequest, next serveNext) (kmsg.Response, error) {
		code := c.groupAllows(a, req.Group, groupacl.Read)
		if code == 0 {
			for _, t := range req.SubscribedTopicNames {
				if !a.canDescribe(t) {
					code = kerr.TopicAuthorizationFailed.Code
					break
				}
			}
		}
		if code != 0 {
			resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
			resp.ErrorCode = code
			return resp, nil
		}
		return next(req)
	})
	authorizeWith(kmsg.ConsumerGroupDescribe, func(c *Checker, _ context.Context, a *access, req *kmsg.ConsumerGroupDescribeRequest, next serveNext) (kmsg.Response, error) {
		var refused []string
		req.Groups, refused = split(req.Groups, func(g string) bool { return c.groupAllows(a, g, groupacl.Describe) == 0 })
		return answerRefused(req, next, refused, func(dr *kmsg.ConsumerGroupDescribeResponse, g string) {
			rg := kmsg.NewConsumerGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode = g, c.groupAllows(a, g, groupacl.Describe)
			dr.Groups = append(dr.Groups, rg)
		})
	})
}
