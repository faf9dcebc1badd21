package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiCodes sends one request of each API straight to the gateway (no client retries) and
// returns the error code each answers for topic's partition 0.
func apiCodes(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) map[string]int16 {
	t.Helper()
	br := cl.SeedBrokers()[0]
	codes := map[string]int16{}

	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	md.Topics = []kmsg.MetadataRequestTopic{mt}
	if r, err := br.Request(ctx, md); err != nil {
		t.Fatalf("Metadata: %v", err)
	} else {
		codes["Metadata"] = r.(*kmsg.MetadataResponse).Topics[0].ErrorCode
	}

	lo := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Timestamp = -1
	lt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{lp}
	lo.Topics = []kmsg.ListOffsetsRequestTopic{lt}
	if r, err := br.Request(ctx, lo); err != nil {
		t.Fatalf("ListOffsets: %v", err)
	} else {
		codes["ListOffsets"] = r.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode
	}

	f := kmsg.NewPtrFetchRequest()
	f.MaxBytes, f.MinBytes, f.SessionEpoch = 1<<20, 1, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
	f.Topics = []kmsg.FetchRequestTopic{ft}
	if r, err := br.Request(ctx, f); err != nil {
		t.Fatalf("Fetch: %v", err)
	} else {
		codes["Fetch"] = r.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode
	}

	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = "g", -1
	ot := kmsg.NewOffsetCommitRequestTopic()
	ot.Topic = topic
	op := kmsg.NewOffsetCommitRequestTopicPartition()
	op.Offset = 1
	ot.Partitions = []kmsg.OffsetCommitRequestTopicPartition{op}
	oc.Topics = []kmsg.OffsetCommitRequestTopic{ot}
	if r, err := br.Request(ctx, oc); err != nil {
		t.Fatalf("OffsetCommit: %v", err)
	} else {
		codes["OffsetCommit"] = r.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	return codes
}

// While Iggy is down, or refuses the bridge account after a restart that forgot it, every API
// answers its one retriable code (docs/DATA-PATH.md, "When Iggy is unavailable"), and a
// rejected login is logged with what to check and counted in /metrics.
func TestIggyUnavailableAnswersRetriableCodes(t *testing.T) {
	want := map[string]int16{
		"ListOffsets":  kerr.NotLeaderForPartition.Code,
		"Fetch":        kerr.NotLeaderForPartition.Code,
		"OffsetCommit": kerr.CoordinatorLoadInProgress.Code,
	}
	for _, restart := range []bool{false, true} {
		name := map[bool]string{false: "iggy down", true: "bridge login rejected"}[restart]
		t.Run(name, func(t *testing.T) {
			addr := freeAddr(t)
			srv := startIggy(t, addr, "iggy")
			g, s := start(t, nil, bridgeEnv(addr, "iggy", "IGGY_KAFKA_METRICS_ADDR=127.0.0.1:0")...)
			ctx := testCtx(t)
			cl := kafkaClient(t, g.kafkaAddr())
			if _, err := kadmCreate(ctx, cl, "orders"); err != nil {
				t.Fatal(err)
			}
			if got := apiCodes(t, ctx, cl, "orders"); got["Metadata"] != 0 || got["ListOffsets"] != 0 || got["Fetch"] != 0 {
				t.Fatalf("with Iggy up: %v", got)
			}
			srv.Close()
			if restart {
				startIggy(t, addr, "forgotten") // the account the gateway uses no longer works
			}
			got := apiCodes(t, ctx, cl, "orders")
			// Metadata may answer from the gateway's topic cache; once the cache must ask
			// Iggy it answers LEADER_NOT_AVAILABLE (TestKafkaCodeStorageUnavailable).
			if c := got["Metadata"]; c != 0 && c != kerr.LeaderNotAvailable.Code {
				t.Errorf("Metadata: %s, want the cached answer or LEADER_NOT_AVAILABLE", kerr.ErrorForCode(c))
			}
			for api, code := range want {
				if got[api] != code {
					t.Errorf("%s: %s, want %s", api, kerr.ErrorForCode(got[api]), kerr.ErrorForCode(code))
				}
				if !kerr.IsRetriable(kerr.ErrorForCode(got[api])) {
					t.Errorf("%s answers %s, which clients do not retry", api, kerr.ErrorForCode(got[api]))
				}
			}
			if !restart {
				return
			}
			if !strings.Contains(s.logs.String(), "Iggy refuses the bridge account's login") {
				t.Errorf("no log line says what to check:\n%s", s.logs.String())
			}
			_, body := httpGet(t, "http://"+g.MetricsAddr()+"/metrics")
			if !strings.Contains(body, "iggy_gateway_kafka_iggy_login_rejections_total ") ||
				strings.Contains(body, "iggy_gateway_kafka_iggy_login_rejections_total 0\n") {
				t.Errorf("/metrics does not count the rejected logins")
			}
		})
	}
}

func kadmCreate(ctx context.Context, cl *kgo.Client, topic string) (int16, error) {
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	req.Topics = []kmsg.CreateTopicsRequestTopic{rt}
	req.TimeoutMillis = 10000
	r, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, err
	}
	return r.Topics[0].ErrorCode, kerr.ErrorForCode(r.Topics[0].ErrorCode)
}
