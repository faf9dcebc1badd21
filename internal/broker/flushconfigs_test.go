package broker

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// Topics the gateway creates get flush options under which an acknowledged write is written
// (or fsynced) before the answer; Kafka's flush configs choose between the two at creation;
// DescribeConfigs reports what the Iggy topic's options say, also for topics created with
// Iggy's defaults.
func TestTopicFlushConfigs(t *testing.T) {
	const never = "9223372036854775807"
	for _, tt := range []struct {
		env                 string
		defaultMode         durability.Mode
		defaultFlushMessage string
	}{
		{"", durability.Write, never},
		{"IGGY_KAFKA_TOPIC_FLUSH=fsync", durability.Fsync, "1"},
		{"IGGY_KAFKA_TOPIC_FLUSH=iggy-default", durability.IggyDefault, never},
	} {
		t.Run(string(tt.defaultMode), func(t *testing.T) {
			var env []string
			if tt.env != "" {
				env = append(env, tt.env)
			}
			g := startGateway(t, gatewayOpts{bridge: true, env: env})
			_, adm := g.kafka()
			ctx := ctxT(t)
			one, maxLong, five := "1", never, "5"
			create := func(name string, configs map[string]*string) error {
				resp, err := adm.CreateTopic(ctx, 1, 1, configs, name)
				if err != nil {
					return err
				}
				return resp.Err
			}
			for name, configs := range map[string]map[string]*string{
				"default": nil,
				"fsync":   {"flush.messages": &one},
				"write":   {"flush.messages": &maxLong, "flush.ms": &maxLong},
			} {
				if err := create(name, configs); err != nil {
					t.Fatalf("create %s: %v", name, err)
				}
			}
			for _, bad := range []map[string]*string{{"flush.messages": &five}, {"flush.ms": &five}} {
				if err := create("bad", bad); !errors.Is(err, kerr.InvalidConfig) {
					t.Errorf("create with %v: %v, want INVALID_CONFIG", bad, err)
				}
			}
			g.mkTopic("kafka", "native", 1) // Iggy's defaults, as an older gateway made them

			want := map[string]struct {
				mode          durability.Mode
				flushMessages string
			}{
				"default": {tt.defaultMode, tt.defaultFlushMessage},
				"fsync":   {durability.Fsync, "1"},
				"write":   {durability.Write, never},
				"native":  {durability.IggyDefault, never},
			}
			rcs, err := adm.DescribeTopicConfigs(ctx, "default", "fsync", "write", "native")
			if err != nil {
				t.Fatal(err)
			}
			for _, rc := range rcs {
				w := want[rc.Name]
				topic, err := g.iggy.GetTopic(ctx, iggy.Name("kafka"), iggy.Name(rc.Name))
				if err != nil {
					t.Fatal(err)
				}
				if m, _ := durability.Of(topic).Mode(); m != w.mode {
					t.Errorf("%s: Iggy options %+v / %+v make mode %s, want %s", rc.Name, topic.Options, topic.DerivedOptions, m, w.mode)
				}
				if v := cfgValue(t, rc, "flush.messages"); v != w.flushMessages {
					t.Errorf("%s: flush.messages %s, want %s", rc.Name, v, w.flushMessages)
				}
				iggyFlush := cfgValue(t, rc, "iggy.topic.flush")
				if w.mode == durability.IggyDefault {
					if !strings.HasPrefix(iggyFlush, "buffered") {
						t.Errorf("%s: iggy.topic.flush %q, want the buffered warning", rc.Name, iggyFlush)
					}
				} else if iggyFlush != string(w.mode) {
					t.Errorf("%s: iggy.topic.flush %q, want %s", rc.Name, iggyFlush, w.mode)
				}
			}

			v := "1"
			resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "flush.messages", Value: &v}}, "write")
			if err == nil {
				err = resp[0].Err
			}
			if !errors.Is(err, kerr.InvalidConfig) || !strings.Contains(resp[0].ErrMessage, "created") {
				t.Errorf("alter flush.messages: %v, want INVALID_CONFIG saying it is set at creation", err)
			}
			brokers, err := adm.DescribeBrokerConfigs(ctx, 1)
			if err != nil || brokers[0].Err != nil {
				t.Fatal(err, brokers)
			}
			if v := cfgValue(t, brokers[0], "iggy.topic.flush"); v != string(tt.defaultMode) {
				t.Errorf("broker iggy.topic.flush %s, want %s", v, tt.defaultMode)
			}
		})
	}
}

func cfgValue(t *testing.T, rc kadm.ResourceConfig, name string) string {
	t.Helper()
	c := configValue(t, rc, name)
	return c.MaybeValue()
}
