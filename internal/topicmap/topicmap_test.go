package topicmap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidateKafkaName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"orders", true},
		{"org.example.events_v2-x", true},
		{strings.Repeat("a", 249), true},
		{strings.Repeat("a", 250), false},
		{"", false},
		{".", false},
		{"..", false},
		{"...", true},
		{"has space", false},
		{"slash/topic", false},
		{"ümlaut", false},
		{"colon:x", false},
	}
	for _, tt := range tests {
		err := ValidateKafkaName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateKafkaName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidTopic) {
			t.Errorf("error %v does not wrap ErrInvalidTopic", err)
		}
	}
}

func TestMapResolveAndReverse(t *testing.T) {
	m, err := New("kafka", map[string]Target{
		"orders":            {Stream: "billing", Topic: "orders_v2"},
		"org.example.event": {Stream: "events"},
		"moved":             {Stream: "other"},
	})
	if err != nil {
		t.Fatal(err)
	}
	resolve := []struct {
		kafka string
		want  Target
	}{
		{"orders", Target{"billing", "orders_v2"}},
		{"org.example.event", Target{"events", "org.example.event"}},
		{"plain", Target{"kafka", "plain"}},
	}
	for _, tt := range resolve {
		if got := m.Resolve(tt.kafka); got != tt.want {
			t.Errorf("Resolve(%q) = %v, want %v", tt.kafka, got, tt.want)
		}
	}
	reverse := []struct {
		stream, topic string
		want          string
		ok            bool
	}{
		{"billing", "orders_v2", "orders", true},
		{"events", "org.example.event", "org.example.event", true},
		{"kafka", "plain", "plain", true},
		{"kafka", "moved", "", false},          // the Kafka name "moved" points elsewhere
		{"billing", "unmapped", "", false},     // no Kafka name reaches it
		{"kafka", "bad name", "", false},       // not a valid Kafka name
		{InternalStream, "offsets", "", false}, // never visible
	}
	for _, tt := range reverse {
		got, ok := m.KafkaName(tt.stream, tt.topic)
		if got != tt.want || ok != tt.ok {
			t.Errorf("KafkaName(%q, %q) = %q, %v; want %q, %v", tt.stream, tt.topic, got, ok, tt.want, tt.ok)
		}
	}
	if got, want := m.Streams(), []string{"billing", "events", "kafka", "other"}; !slices.Equal(got, want) {
		t.Errorf("Streams() = %v, want %v", got, want)
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name      string
		def       string
		overrides map[string]Target
		want      string
	}{
		{"reserved default", InternalStream, nil, "reserved"},
		{"empty default", "", nil, "1..255"},
		{"reserved override", "kafka", map[string]Target{"a": {Stream: InternalStream}}, "reserved"},
		{"invalid kafka name", "kafka", map[string]Target{"a b": {Stream: "s"}}, "invalid topic name"},
		{"duplicate target", "kafka", map[string]Target{"a": {Stream: "s", Topic: "t"}, "b": {Stream: "s", Topic: "t"}}, "both map"},
		{"long topic", "kafka", map[string]Target{"a": {Stream: "s", Topic: strings.Repeat("x", 256)}}, "1..255"},
	}
	for _, tt := range tests {
		_, err := New(tt.def, tt.overrides)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name, doc string
		want      string // error substring; "" = success
		check     func(*testing.T, *Map)
	}{
		{name: "spec example", doc: `default_stream = "kafka"

[topics.orders]
stream = "billing"
topic = "orders_v2"

[topics."org.example.events"]
stream = "events"
`, check: func(t *testing.T, m *Map) {
			if m.DefaultStream() != "kafka" || m.Resolve("orders") != (Target{"billing", "orders_v2"}) ||
				m.Resolve("org.example.events") != (Target{"events", "org.example.events"}) {
				t.Errorf("unexpected map %+v", m)
			}
		}},
		{name: "default only", doc: `default_stream = "s1"`, check: func(t *testing.T, m *Map) {
			if m.Resolve("x") != (Target{"s1", "x"}) {
				t.Errorf("Resolve = %v", m.Resolve("x"))
			}
		}},
		{name: "missing default", doc: "[topics.a]\nstream = \"s\"\n", want: "default_stream is required"},
		{name: "typo key", doc: "default_stream = \"k\"\n[topics.a]\nstraem = \"s\"\n", want: "unknown keys: topics.a.straem"},
		{name: "missing stream", doc: "default_stream = \"k\"\n[topics.a]\ntopic = \"t\"\n", want: "stream is required"},
		{name: "not toml", doc: "default_stream = ", want: "topic map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "map.toml")
			if err := os.WriteFile(path, []byte(tt.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			m, err := Load(path)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, m)
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "absent.toml")); err == nil {
		t.Error("missing file accepted")
	}
}

func TestCache(t *testing.T) {
	m, _ := New("kafka", nil)
	calls := 0
	notFound := errors.New("not found")
	partitions := uint32(3)
	lookup := func(_ context.Context, tg Target) (uint32, uint32, uint64, error) {
		calls++
		if tg.Topic == "missing" {
			return 0, 0, 0, notFound
		}
		return 7, partitions, 99, nil
	}
	c := NewCache(m, lookup, time.Minute)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	ctx := context.Background()

	r, err := c.Resolve(ctx, "orders")
	if err != nil || r.Partitions != 3 || r.TopicID != 7 || r.Target != (Target{"kafka", "orders"}) {
		t.Fatalf("Resolve = %+v, %v", r, err)
	}
	if _, err := c.Resolve(ctx, "orders"); err != nil || calls != 1 {
		t.Fatalf("second Resolve asked Iggy again (calls=%d, err=%v)", calls, err)
	}
	partitions = 5
	c.Invalidate("orders")
	if r, _ := c.Resolve(ctx, "orders"); r.Partitions != 5 || calls != 2 {
		t.Fatalf("after Invalidate: %+v, calls=%d", r, calls)
	}
	partitions = 6
	now = now.Add(2 * time.Minute)
	if r, _ := c.Resolve(ctx, "orders"); r.Partitions != 6 || calls != 3 {
		t.Fatalf("after TTL: %+v, calls=%d", r, calls)
	}
	for range 2 {
		if _, err := c.Resolve(ctx, "missing"); !errors.Is(err, notFound) {
			t.Fatalf("missing topic: %v", err)
		}
	}
	if calls != 5 {
		t.Fatalf("missing topics must not be cached: calls=%d", calls)
	}
	c.Store(Resolved{Kafka: "created", Target: Target{"kafka", "created"}, Partitions: 9})
	if r, _ := c.Resolve(ctx, "created"); r.Partitions != 9 || calls != 5 {
		t.Fatalf("stored entry not used: %+v calls=%d", r, calls)
	}
	c.InvalidateAll()
	c.Resolve(ctx, "created")
	if calls != 6 {
		t.Fatalf("InvalidateAll kept entries: calls=%d", calls)
	}
}
