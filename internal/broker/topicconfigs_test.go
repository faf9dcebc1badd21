package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

func TestRetentionChangeSet(t *testing.T) {
	const never = iggy.Never
	for _, tc := range []struct {
		name, value string
		expiry      uint64 // want, when ok and a time config
		size        uint64 // want, when ok and retention.bytes
		err         bool
	}{
		{"retention.ms", "-1", never, 0, false},
		{"retention.ms", "1", 1000, 0, false},
		{"retention.ms", " 3600000 ", 3_600_000_000, 0, false},
		{"retention.ms", "+5", 5000, 0, false},
		{"retention.ms", "4294967295000", 4_294_967_295_000_000, 0, false},
		{"retention.ms", "4294967295001", 0, 0, true},
		{"retention.ms", "9223372036854775807", 0, 0, true},
		{"retention.ms", "0", 0, 0, true},
		{"retention.ms", "-2", 0, 0, true},
		{"retention.ms", "1.5", 0, 0, true},
		{"retention.ms", "", 0, 0, true},
		{"retention.ms", "99999999999999999999", 0, 0, true},
		{"retention.minutes", "2", 120_000_000, 0, false},
		{"retention.minutes", "-1", never, 0, false},
		{"retention.minutes", "71582788", 4_294_967_280_000_000, 0, false},
		{"retention.minutes", "71582789", 0, 0, true},
		{"retention.hours", "168", 604_800_000_000, 0, false},
		{"retention.hours", "0", 0, 0, true},
		{"retention.hours", "1193047", 0, 0, true},
		{"retention.bytes", "-1", 0, never, false},
		{"retention.bytes", "1073741824", 0, 1 << 30, false},
		{"retention.bytes", "9223372036854775807", 0, 1<<63 - 1, false},
		{"retention.bytes", "1073741823", 0, 0, true},
		{"retention.bytes", "0", 0, 0, true},
		{"retention.bytes", "-2", 0, 0, true},
		{"retention.bytes", "lots", 0, 0, true},
		{"cleanup.policy", "delete", 0, 0, true},
		{"segment.bytes", "1073741824", 0, 0, true},
		{"Retention.ms", "1000", 0, 0, true},
	} {
		var c retentionChange
		err := c.set(tc.name, tc.value)
		if tc.err {
			if err == nil || err.code != kerr.InvalidConfig.Code || err.msg == "" {
				t.Errorf("%s=%q: %+v, want INVALID_CONFIG with a message", tc.name, tc.value, err)
			}
			if !c.empty() {
				t.Errorf("%s=%q: a refused value changed %+v", tc.name, tc.value, c.options())
			}
			continue
		}
		if err != nil {
			t.Errorf("%s=%q: %s", tc.name, tc.value, err.msg)
			continue
		}
		if got := c.options(); got.MessageExpiry != tc.expiry || got.MaxTopicSize != tc.size {
			t.Errorf("%s=%q: options %+v, want expiry %d size %d", tc.name, tc.value, got, tc.expiry, tc.size)
		}
	}
}

func TestRetentionChangeCombinations(t *testing.T) {
	var c retentionChange
	if err := c.set("retention.ms", "1000"); err != nil {
		t.Fatal(err.msg)
	}
	if err := c.set("retention.ms", "2000"); err != nil {
		t.Errorf("the same config twice (Kafka keeps the last): %s", err.msg)
	}
	if err := c.set("retention.hours", "1"); err == nil || err.code != kerr.InvalidConfig.Code {
		t.Errorf("two spellings of the retention time: %+v", err)
	}
	if err := c.reset("retention.minutes"); err == nil {
		t.Error("resetting another spelling of a set retention time was accepted")
	}
	if got := c.options(); got.MessageExpiry != 2_000_000 || got.MaxTopicSize != 0 {
		t.Errorf("options %+v", got)
	}

	var d retentionChange
	if err := d.reset("retention.hours"); err != nil {
		t.Fatal(err.msg)
	}
	if err := d.reset("retention.bytes"); err != nil {
		t.Fatal(err.msg)
	}
	if got := d.options(); got.MessageExpiry != iggy.Never || got.MaxTopicSize != iggy.Never {
		t.Errorf("reset: options %+v, want both Never", got)
	}
	if err := d.reset("cleanup.policy"); err == nil {
		t.Error("cleanup.policy reset accepted")
	}

	var all retentionChange
	all.resetAll()
	if err := all.set("retention.bytes", "2147483648"); err != nil {
		t.Fatal(err.msg)
	}
	if got := all.apply(retention{expiry: 5, maxSize: 7}); got != (retention{expiry: iggy.Never, maxSize: 2 << 30}) {
		t.Errorf("replace-all change applied: %+v", got)
	}
	var none retentionChange
	if !none.empty() || none.apply(retention{expiry: 5, maxSize: 7}) != (retention{expiry: 5, maxSize: 7}) {
		t.Error("an empty change changes something")
	}
}

func TestTopicConfigEntries(t *testing.T) {
	byName := func(es []configEntry) map[string]configEntry {
		m := map[string]configEntry{}
		for _, e := range es {
			m[e.name] = e
		}
		return m
	}
	def := byName(topicConfigEntries(defaultRetention))
	for name, want := range map[string]string{"retention.ms": "-1", "retention.bytes": "-1"} {
		e := def[name]
		if e.value != want || e.source != kmsg.ConfigSourceDefaultConfig || len(e.synonyms) != 1 || e.synonyms[0].source != kmsg.ConfigSourceDefaultConfig {
			t.Errorf("default %s: %+v", name, e)
		}
	}
	set := byName(topicConfigEntries(retention{expiry: 3_600_000_000, maxSize: 5 << 30}))
	for name, want := range map[string]string{"retention.ms": "3600000", "retention.bytes": "5368709120"} {
		e := set[name]
		if e.value != want || e.source != kmsg.ConfigSourceDynamicTopicConfig || e.readOnly || e.typ != kmsg.ConfigTypeLong {
			t.Errorf("set %s: %+v", name, e)
		}
		if len(e.synonyms) != 2 || e.synonyms[0] != (configSynonym{name, want, kmsg.ConfigSourceDynamicTopicConfig}) ||
			e.synonyms[1].source != kmsg.ConfigSourceDefaultConfig || e.synonyms[1].value != "-1" {
			t.Errorf("set %s: synonyms %+v", name, e.synonyms)
		}
	}
	// An expiry set natively in µs that is not a whole millisecond is rounded up.
	for us, want := range map[uint64]string{1: "1", 1500: "2", 2000: "2", 0: "-1"} {
		r := retentionOf(&iggy.Topic{MessageExpiry: us, MaxTopicSize: 0})
		if got := byName(topicConfigEntries(r))["retention.ms"].value; got != want {
			t.Errorf("expiry %d µs: retention.ms %s, want %s", us, got, want)
		}
	}
}

// FuzzRetentionChange: any config name and value from the network either is refused with
// INVALID_CONFIG and a message, leaving the change untouched, or yields Iggy options within
// the bounds Iggy can take.
func FuzzRetentionChange(f *testing.F) {
	for _, s := range [][2]string{{"retention.ms", "-1"}, {"retention.hours", "168"}, {"retention.bytes", "1073741824"},
		{"retention.minutes", "-0"}, {"retention.ms", "1e3"}, {"cleanup.policy", "delete"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		var c retentionChange
		if err := c.set(name, value); err != nil {
			if err.code != kerr.InvalidConfig.Code || err.msg == "" || !c.empty() {
				t.Fatalf("%q=%q: %+v, change %+v", name, value, err, c.options())
			}
			return
		}
		o := c.options()
		if e := o.MessageExpiry; e != 0 && e != iggy.Never && (e > maxRetentionMs*1000 || e%1000 != 0) {
			t.Fatalf("%q=%q: expiry %d µs", name, value, e)
		}
		if s := o.MaxTopicSize; s != 0 && s != iggy.Never && s < minRetentionBytes {
			t.Fatalf("%q=%q: max topic size %d", name, value, s)
		}
		if c.empty() {
			t.Fatalf("%q=%q accepted without a change", name, value)
		}
	})
}
