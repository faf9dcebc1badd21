package gateway

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// GROUP_INITIAL_REBALANCE_DELAY_MS reaches the group coordinator: the first JoinGroup of a
// group that starts empty is answered after the delay, and at once with 0 (issue 28: Kafka's
// perf tool spent 3 s joining because the delay could not be changed).
func TestGroupInitialRebalanceDelaySetting(t *testing.T) {
	tests := []struct {
		delayMS string
		atLeast time.Duration
		atMost  time.Duration
	}{
		{"0", 0, time.Second},
		{"1500", 1500 * time.Millisecond, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.delayMS, func(t *testing.T) {
			g, _ := start(t, nil, "IGGY_KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS="+tt.delayMS)
			cl := kafkaClient(t, g.kafkaAddr())
			ctx := testCtx(t)
			join := func(memberID string) *kmsg.JoinGroupResponse {
				t.Helper()
				req := kmsg.NewPtrJoinGroupRequest()
				req.Group = "delay-" + tt.delayMS
				req.MemberID = memberID
				req.ProtocolType = "consumer"
				req.SessionTimeoutMillis = 10000
				req.RebalanceTimeoutMillis = 30000
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name = "range"
				req.Protocols = append(req.Protocols, p)
				resp, err := req.RequestWith(ctx, cl)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			began := time.Now()
			resp := join("")
			if kerr.ErrorForCode(resp.ErrorCode) == kerr.MemberIDRequired { // v4+: join again with the id
				resp = join(resp.MemberID)
			}
			took := time.Since(began)
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				t.Fatalf("JoinGroup: %v", err)
			}
			if took < tt.atLeast || took > tt.atMost {
				t.Errorf("JoinGroup answered after %v, want between %v and %v", took, tt.atLeast, tt.atMost)
			}
		})
	}
}
