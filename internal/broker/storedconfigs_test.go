package broker

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestStoredConfigs: the configs Kafka Streams and Connect create their internal topics with
// are stored, described back exactly with their sources and synonyms, altered, kept across a
// gateway restart and forgotten with the topic.
func TestStoredConfigs(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	_, adm := g.kafka()
	ctx := ctxT(t)
	streams := map[string]*string{ // what Streams asks for a changelog and a repartition topic
		"cleanup.policy": kmsg.StringPtr("compact"), "message.timestamp.type": kmsg.StringPtr("CreateTime"),
		"segment.bytes": kmsg.StringPtr("52428800"), "min.insync.replicas": kmsg.StringPtr("1"),
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, streams, "changelog"); err != nil {
		t.Fatal(err)
	}
	repartition := map[string]*string{"cleanup.policy": kmsg.StringPtr("delete"), "retention.ms": kmsg.StringPtr("-1"),
		"segment.ms": kmsg.StringPtr("600000"), "message.timestamp.type": kmsg.StringPtr("LogAppendTime")}
	if _, err := adm.CreateTopic(ctx, 1, 1, repartition, "repartition"); err != nil {
		t.Fatal(err)
	}
	describe := func(adm *kadm.Client, topic string) kadm.ResourceConfig {
		t.Helper()
		rcs, err := adm.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := rcs.On(topic, nil)
		if err != nil || rc.Err != nil {
			t.Fatalf("describe %s: %v %v", topic, err, rc.Err)
		}
		return rc
	}
	check := func(adm *kadm.Client, topic string, want map[string]string) {
		t.Helper()
		rc := describe(adm, topic)
		for name, v := range want {
			c := configValue(t, rc, name)
			if c.MaybeValue() != v || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
				t.Errorf("%s %s = %q (%v), want %q DYNAMIC_TOPIC_CONFIG", topic, name, c.MaybeValue(), c.Source, v)
			}
			if len(c.Synonyms) != 2 || c.Synonyms[0].Source != kmsg.ConfigSourceDynamicTopicConfig || c.Synonyms[1].Source != kmsg.ConfigSourceDefaultConfig {
				t.Errorf("%s %s synonyms %+v", topic, name, c.Synonyms)
			}
		}
	}
	check(adm, "changelog", map[string]string{"cleanup.policy": "compact", "message.timestamp.type": "CreateTime", "segment.bytes": "52428800", "min.insync.replicas": "1"})
	check(adm, "repartition", map[string]string{"cleanup.policy": "delete", "segment.ms": "600000", "message.timestamp.type": "LogAppendTime"})
	if c := configValue(t, describe(adm, "changelog"), "segment.ms"); c.MaybeValue() != "604800000" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("unset segment.ms %+v", c)
	}

	// Incremental alter: SET and DELETE of stored configs, the others untouched.
	resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "max.message.bytes", Value: kmsg.StringPtr("2048")},
		{Op: kadm.DeleteConfig, Name: "segment.bytes"},
	}, "changelog")
	if err == nil {
		_, err = resps.On("changelog", nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	check(adm, "changelog", map[string]string{"cleanup.policy": "compact", "max.message.bytes": "2048"})
	if c := configValue(t, describe(adm, "changelog"), "segment.bytes"); c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("segment.bytes after DELETE %+v", c)
	}
	// A retention on a compact-only topic is refused (Kafka would ignore it; Iggy would apply it).
	resps, _ = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kmsg.StringPtr("1000")}}, "changelog")
	if r, _ := resps.On("changelog", nil); !errors.Is(r.Err, kerr.InvalidConfig) {
		t.Errorf("retention on compact: %v", r.Err)
	}

	// Another gateway instance over the same Iggy (a restart) reads the same configs.
	restarted, err := New(Options{Config: g.config, Iggy: g.iggy, Logger: testLogger(t), ClusterID: ClusterID("test"), TopicState: loadTopicState(t, g.iggy)})
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName, res.ConfigNames = kmsg.ConfigResourceTypeTopic, "changelog", []string{"cleanup.policy", "max.message.bytes"}
	req.Resources = append(req.Resources, res)
	resp, err := restarted.describeConfigs(ctx, nil, req)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range resp.(*kmsg.DescribeConfigsResponse).Resources[0].Configs {
		got[c.Name] = *c.Value
	}
	if got["cleanup.policy"] != "compact" || got["max.message.bytes"] != "2048" || len(got) != 2 {
		t.Errorf("after restart: %v", got)
	}

	// Deleted and recreated: the new topic starts from the defaults.
	if _, err := adm.DeleteTopics(ctx, "changelog"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "changelog"); err != nil {
		t.Fatal(err)
	}
	if c := configValue(t, describe(adm, "changelog"), "cleanup.policy"); c.MaybeValue() != "delete" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("recreated topic: %+v", c)
	}
}
