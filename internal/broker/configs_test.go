package broker

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// configValue returns a config of a kadm resource, failing t when it is missing.
func configValue(t *testing.T, rc kadm.ResourceConfig, name string) kadm.Config {
	t.Helper()
	for _, c := range rc.Configs {
		if c.Key == name {
			return c
		}
	}
	t.Fatalf("%s has no config %s: %+v", rc.Name, name, rc.Configs)
	return kadm.Config{}
}

func TestTopicConfigsWithKadm(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "t", 1)
	_, adm := g.kafka()
	ctx := ctxT(t)
	describe := func() kadm.ResourceConfig {
		t.Helper()
		rcs, err := adm.DescribeTopicConfigs(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		rc, err := rcs.On("t", nil)
		if err != nil || rc.Err != nil {
			t.Fatalf("describe: %v %v", err, rc.Err)
		}
		return rc
	}

	rc := describe()
	for name, want := range map[string]string{"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"} {
		if c := configValue(t, rc, name); c.MaybeValue() != want || c.Source != kmsg.ConfigSourceDefaultConfig {
			t.Errorf("default %s = %q (source %v), want %q DEFAULT_CONFIG", name, c.MaybeValue(), c.Source, want)
		}
	}

	// Incremental: SET, then DELETE back to the default; Iggy's options follow.
	hour, size := "3600000", "2147483648"
	alter := func(validate bool, ops ...kadm.AlterConfig) error {
		t.Helper()
		fn := adm.AlterTopicConfigs
		if validate {
			fn = adm.ValidateAlterTopicConfigs
		}
		resp, err := fn(ctx, ops, "t")
		if err != nil {
			return err
		}
		r, err := resp.On("t", nil)
		if err != nil {
			return err
		}
		return r.Err
	}
	if err := alter(true, kadm.AlterConfig{Op: kadm.SetConfig, Name: "retention.ms", Value: &hour}); err != nil {
		t.Fatalf("validate-only alter: %v", err)
	}
	if tp := g.iggyTopic("kafka", "t"); tp.MessageExpiry != iggy.Never {
		t.Fatalf("validate-only alter changed the expiry to %d", tp.MessageExpiry)
	}
	if err := alter(false, kadm.AlterConfig{Op: kadm.SetConfig, Name: "retention.ms", Value: &hour},
		kadm.AlterConfig{Op: kadm.SetConfig, Name: "retention.bytes", Value: &size}); err != nil {
		t.Fatalf("alter: %v", err)
	}
	if tp := g.iggyTopic("kafka", "t"); tp.MessageExpiry != 3_600_000_000 || tp.MaxTopicSize != 2<<30 {
		t.Fatalf("Iggy topic after alter: expiry %d µs, max size %d", tp.MessageExpiry, tp.MaxTopicSize)
	}
	rc = describe()
	c := configValue(t, rc, "retention.ms")
	if c.MaybeValue() != hour || c.Source != kmsg.ConfigSourceDynamicTopicConfig ||
		len(c.Synonyms) != 2 || c.Synonyms[0].Source != kmsg.ConfigSourceDynamicTopicConfig || c.Synonyms[1].Key != "log.retention.ms" {
		t.Errorf("retention.ms after alter: %+v", c)
	}
	if c := configValue(t, rc, "retention.bytes"); c.MaybeValue() != size || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("retention.bytes after alter: %+v", c)
	}
	if err := alter(false, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "retention.ms"}); err != nil {
		t.Fatalf("delete retention.ms: %v", err)
	}
	if tp := g.iggyTopic("kafka", "t"); tp.MessageExpiry != iggy.Never || tp.MaxTopicSize != 2<<30 {
		t.Fatalf("after DELETE retention.ms: expiry %d µs, max size %d (untouched)", tp.MessageExpiry, tp.MaxTopicSize)
	}

	// Legacy AlterConfigs replaces the whole set: retention.bytes, not named, goes back to -1.
	two := "7200000"
	resp, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: &two}}, "t")
	if err == nil {
		err = resp[0].Err
	}
	if err != nil {
		t.Fatalf("legacy alter: %v", err)
	}
	if tp := g.iggyTopic("kafka", "t"); tp.MessageExpiry != 7_200_000_000 || tp.MaxTopicSize != iggy.Never {
		t.Fatalf("after legacy alter: expiry %d µs, max size %d", tp.MessageExpiry, tp.MaxTopicSize)
	}

	// Refusals.
	for _, tc := range []struct {
		op   kadm.AlterConfig
		want error
	}{
		{kadm.AlterConfig{Op: kadm.SetConfig, Name: "remote.storage.enable", Value: kmsg.StringPtr("true")}, kerr.InvalidConfig},
		{kadm.AlterConfig{Op: kadm.SetConfig, Name: "cleanup.policy", Value: kmsg.StringPtr("bogus")}, kerr.InvalidConfig},
		{kadm.AlterConfig{Op: kadm.AppendConfig, Name: "retention.ms", Value: &hour}, kerr.InvalidConfig},
		{kadm.AlterConfig{Op: kadm.SubtractConfig, Name: "cleanup.policy", Value: kmsg.StringPtr("delete")}, kerr.InvalidConfig},
		{kadm.AlterConfig{Op: kadm.SetConfig, Name: "retention.bytes", Value: kmsg.StringPtr("1000")}, kerr.InvalidConfig},
	} {
		if err := alter(false, tc.op); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.op, err, tc.want)
		}
	}
	if tp := g.iggyTopic("kafka", "t"); tp.MessageExpiry != 7_200_000_000 || tp.MaxTopicSize != iggy.Never {
		t.Errorf("refused alters changed the topic: expiry %d µs, max size %d", tp.MessageExpiry, tp.MaxTopicSize)
	}

	rcs, err := adm.DescribeTopicConfigs(ctx, "missing")
	if err != nil {
		t.Fatal(err)
	}
	if rc, _ := rcs.On("missing", nil); !errors.Is(rc.Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("describe missing topic: %v", rc.Err)
	}
	resp, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: &hour}}, "missing")
	if err == nil {
		err = resp[0].Err
	}
	if !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("alter missing topic: %v", err)
	}
}

func TestBrokerConfigsWithKadm(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true, env: []string{"IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED=true", "IGGY_KAFKA_AUTO_CREATE_TOPICS_PARTITIONS=6"}})
	_, adm := g.kafka()
	ctx := ctxT(t)
	for _, brokers := range [][]int32{{1}, nil} {
		rcs, err := adm.DescribeBrokerConfigs(ctx, brokers...)
		if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
			t.Fatalf("describe broker %v: %v %+v", brokers, err, rcs)
		}
		for name, want := range map[string]string{"num.partitions": "6", "auto.create.topics.enable": "true", "node.id": "1",
			"log.retention.ms": "-1", "log.retention.bytes": "-1", "log.cleanup.policy": "delete", "default.replication.factor": "1"} {
			if c := configValue(t, rcs[0], name); c.MaybeValue() != want {
				t.Errorf("broker %v: %s = %q, want %q", brokers, name, c.MaybeValue(), want)
			}
		}
	}
	v := "3"
	resp, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "num.partitions", Value: &v}}, 1)
	if err == nil {
		err = resp[0].Err
	}
	if !errors.Is(err, kerr.InvalidConfig) || !strings.Contains(resp[0].ErrMessage, "IGGY_KAFKA_") {
		t.Errorf("alter broker config: %v %q, want INVALID_CONFIG naming the gateway's settings", err, resp[0].ErrMessage)
	}
}

// Every DescribeConfigs version; synonyms and documentation only when asked; requested names
// filter; resource errors.
func TestDescribeConfigsAllVersions(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "t", 1)
	c := dialRaw(t, g.addr)
	for v := int16(1); v <= 4; v++ {
		for _, extras := range []bool{false, true} {
			req := kmsg.NewPtrDescribeConfigsRequest()
			req.Version = v
			req.IncludeSynonyms, req.IncludeDocumentation = extras, extras
			req.Resources = []kmsg.DescribeConfigsRequestResource{
				{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t"},
				{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t", ConfigNames: []string{"retention.ms", "no.such.config"}},
				{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "missing"},
				{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "bad name"},
				{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "2"},
				{ResourceType: kmsg.ConfigResourceTypeBrokerLogger, ResourceName: "1"},
			}
			resp := c.roundTrip(req).(*kmsg.DescribeConfigsResponse)
			if len(resp.Resources) != len(req.Resources) {
				t.Fatalf("v%d: %d resources", v, len(resp.Resources))
			}
			all := resp.Resources[0]
			wantCode(t, "topic", all.ErrorCode, all.ErrorMessage, 0)
			if len(all.Configs) != 5+len(storedConfigs) { // flush.messages, flush.ms, iggy.topic.flush, retention.bytes, retention.ms and the stored ones
				t.Errorf("v%d: %d configs: %+v", v, len(all.Configs), all.Configs)
			}
			for _, cfg := range all.Configs {
				hasSynonyms := len(cfg.ConfigSynonyms) > 0
				hasDoc := cfg.Documentation != nil && *cfg.Documentation != ""
				if hasSynonyms != extras || (v >= 3 && hasDoc != extras) {
					t.Errorf("v%d extras=%v: %s synonyms %v documentation %v", v, extras, cfg.Name, cfg.ConfigSynonyms, cfg.Documentation)
				}
				if v >= 3 && cfg.ConfigType == kmsg.ConfigTypeUnknown {
					t.Errorf("v%d: %s has no type", v, cfg.Name)
				}
			}
			if f := resp.Resources[1].Configs; len(f) != 1 || f[0].Name != "retention.ms" {
				t.Errorf("v%d: filtered configs %+v", v, f)
			}
			for i, want := range []int16{kerr.UnknownTopicOrPartition.Code, kerr.InvalidTopicException.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code} {
				r := resp.Resources[2+i]
				wantCode(t, r.ResourceName, r.ErrorCode, r.ErrorMessage, want)
				if len(r.Configs) != 0 {
					t.Errorf("v%d: %s failed but carries configs", v, r.ResourceName)
				}
			}
		}
	}
}

// Every AlterConfigs and IncrementalAlterConfigs version, and the request-shape refusals.
func TestAlterConfigsAllVersions(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	g.mkTopic("kafka", "t", 1)
	c := dialRaw(t, g.addr)
	str := kmsg.StringPtr
	topic := kmsg.ConfigResourceTypeTopic
	ms := int64(1000)
	for v := int16(0); v <= 2; v++ {
		ms += 1000
		req := kmsg.NewPtrAlterConfigsRequest()
		req.Version = v
		req.Resources = []kmsg.AlterConfigsRequestResource{
			{ResourceType: topic, ResourceName: "t", Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: str(strconv.FormatInt(ms, 10))}}},
			{ResourceType: topic, ResourceName: "twice"},
			{ResourceType: topic, ResourceName: "twice"},
			{ResourceType: topic, ResourceName: "nulls", Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms"}}},
			{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "1"},
			{ResourceType: topic, ResourceName: ""},
		}
		resp := c.roundTrip(req).(*kmsg.AlterConfigsResponse)
		want := []int16{0, kerr.InvalidRequest.Code, kerr.InvalidConfig.Code, kerr.InvalidConfig.Code, kerr.InvalidRequest.Code}
		if len(resp.Resources) != len(want) {
			t.Fatalf("v%d: %d results, want %d: %+v", v, len(resp.Resources), len(want), resp.Resources)
		}
		for i, w := range want {
			r := resp.Resources[i]
			wantCode(t, "legacy "+r.ResourceName, r.ErrorCode, r.ErrorMessage, w)
		}
		if tp := g.iggyTopic("kafka", "t"); tp.MessageExpiry != uint64(ms)*1000 {
			t.Errorf("v%d: expiry %d µs, want %d", v, tp.MessageExpiry, ms*1000)
		}
	}
	for v := int16(0); v <= 1; v++ {
		ms += 1000
		set := kmsg.IncrementalAlterConfigOpSet
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Version = v
		req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{
			{ResourceType: topic, ResourceName: "t", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: set, Value: str(strconv.FormatInt(ms, 10))}}},
			{ResourceType: topic, ResourceName: "twice"},
			{ResourceType: topic, ResourceName: "twice"},
			{ResourceType: topic, ResourceName: "dupkeys", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{
				{Name: "retention.ms", Op: set, Value: str("1")}, {Name: "retention.ms", Op: set, Value: str("2")}}},
			{ResourceType: topic, ResourceName: "nullset", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: set}}},
			{ResourceType: topic, ResourceName: "badop", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: 9, Value: str("1")}}},
			{ResourceType: topic, ResourceName: "missing", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: set, Value: str("1")}}},
			{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "x"},
			{ResourceType: kmsg.ConfigResourceTypeClientMetrics, ResourceName: "m"},
		}
		resp := c.roundTrip(req).(*kmsg.IncrementalAlterConfigsResponse)
		want := []int16{0, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code,
			kerr.InvalidRequest.Code, kerr.UnknownTopicOrPartition.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code}
		if len(resp.Resources) != len(want) {
			t.Fatalf("v%d: %d results, want %d", v, len(resp.Resources), len(want))
		}
		for i, w := range want {
			r := resp.Resources[i]
			wantCode(t, "incremental "+r.ResourceName, r.ErrorCode, r.ErrorMessage, w)
			if w != 0 && (r.ErrorMessage == nil || *r.ErrorMessage == "") {
				t.Errorf("v%d: %s: no message", v, r.ResourceName)
			}
		}
		if tp := g.iggyTopic("kafka", "t"); tp.MessageExpiry != uint64(ms)*1000 {
			t.Errorf("v%d: expiry %d µs, want %d", v, tp.MessageExpiry, ms*1000)
		}
	}
	// An empty incremental change succeeds on an existing topic and changes nothing.
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Version = 1
	req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: topic, ResourceName: "t"}}
	r := c.roundTrip(req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
	wantCode(t, "empty change", r.ErrorCode, r.ErrorMessage, 0)
	if tp := g.iggyTopic("kafka", "t"); tp.MessageExpiry != uint64(ms)*1000 {
		t.Errorf("empty change: expiry %d µs", tp.MessageExpiry)
	}
}
