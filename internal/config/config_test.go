package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func load(t *testing.T, args []string, env ...string) (*Config, error) {
	t.Helper()
	return Load(args, env)
}

func TestDefaults(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Listener{Name: "PLAINTEXT", Protocol: "PLAINTEXT", Addr: "127.0.0.1:9093", AdvertisedHost: "127.0.0.1", AdvertisedPort: 9093}
	if len(c.Listeners) != 1 || c.Listeners[0] != want {
		t.Errorf("listeners = %+v", c.Listeners)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"bridge", c.Bridge.Enabled, false},
		{"iggy addr", c.Bridge.Addr, "127.0.0.1:8090"},
		{"username", c.Bridge.Username, "iggy"},
		{"retry window", c.Bridge.RetryWindow, 60 * time.Second},
		{"iggy pool", c.Bridge.PoolSize, 4},
		{"stream", c.DefaultStream, "kafka"},
		{"map stream", c.TopicMap.DefaultStream(), "kafka"},
		{"node", c.NodeID, 1},
		{"partitions", c.AutoCreatePartitions, 1},
		{"max frame", c.Limits.MaxFrameSize, 100 << 20},
		{"preauth frame", c.Limits.PreAuthMaxFrameSize, 512 << 10},
		{"request memory", c.Limits.MaxRequestMemory, 1 << 30},
		{"max conns", c.Limits.MaxConnections, 1024},
		{"max conns per address", c.Limits.MaxConnectionsPerAddress, 0},
		{"group initial rebalance delay", c.GroupInitialRebalanceDelay, 3 * time.Second},
		{"idle", c.Limits.IdleTimeout, 10 * time.Minute},
		{"read", c.Limits.ReadTimeout, 15 * time.Second},
		{"write", c.Limits.WriteTimeout, 10 * time.Second},
		{"drain", c.Limits.ShutdownDrainTimeout, 25 * time.Second},
		{"auths", c.Limits.MaxConcurrentAuthentications, 4},
		{"producer expiry", c.ProducerExpiry, 24 * time.Hour},
		{"idempotent producers", c.IdempotentProducers, true},
		{"producer rebuild messages", c.ProducerRebuildMessages, 10000},
		{"tail cache bytes", c.TailCacheBytes, TailCacheAuto(readMemory(), 1<<30)},
		{"coordinator log", c.CoordinatorLog, "auto"},
		{"coordinator log recovery", c.CoordinatorLogRecovery, "fallback"},
		{"log format", c.LogFormat, "text"},
		{"dev addr", c.DevIggyAddr, "127.0.0.1:8090"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.what, ch.got, ch.want)
		}
	}
}

func TestEnvFlagsAndPrecedence(t *testing.T) {
	c, err := load(t, []string{"--max-frame-size=1MiB", "--idle-timeout", "90s", "--node-id=7"},
		"IGGY_KAFKA_BIND_ADDR=0.0.0.0:19093",
		"IGGY_KAFKA_ADVERTISED_HOST=gw.example",
		"IGGY_KAFKA_ADVERTISED_PORT=29093",
		"IGGY_KAFKA_NODE_ID=3",
		"IGGY_KAFKA_BRIDGE_ENABLED=true",
		"IGGY_KAFKA_IGGY_PASSWORD=s3cret",
		"IGGY_KAFKA_AUTO_CREATE_TOPICS_PARTITIONS=12",
		"IGGY_KAFKA_LOG_FORMAT=json",
		"UNRELATED=1",
		"IGGY_TEST_ADDR=ignored:1",
	)
	if err != nil {
		t.Fatal(err)
	}
	l := c.Listeners[0]
	if l.Addr != "0.0.0.0:19093" || l.AdvertisedHost != "gw.example" || l.AdvertisedPort != 29093 {
		t.Errorf("listener = %+v", l)
	}
	if c.NodeID != 7 {
		t.Errorf("flag must win over env: node id %d", c.NodeID)
	}
	if c.Limits.MaxFrameSize != 1<<20 || c.Limits.IdleTimeout != 90*time.Second {
		t.Errorf("limits = %+v", c.Limits)
	}
	if !c.Bridge.Enabled || c.Bridge.Password.Reveal() != "s3cret" || c.AutoCreatePartitions != 12 || c.LogFormat != "json" {
		t.Errorf("config = %+v", c)
	}
}

func TestMisspeltVariableStopsStartup(t *testing.T) {
	_, err := load(t, nil, "IGGY_KAFKA_BIND_ADRR=127.0.0.1:9000")
	if err == nil {
		t.Fatal("misspelt variable accepted")
	}
	for _, want := range []string{"IGGY_KAFKA_BIND_ADRR", "did you mean IGGY_KAFKA_BIND_ADDR?"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	_, err = load(t, nil, "IGGY_KAFKA_COMPLETELY_DIFFERENT=1")
	if err == nil || !strings.Contains(err.Error(), "IGGY_KAFKA_COMPLETELY_DIFFERENT") {
		t.Errorf("unknown variable: %v", err)
	}
}

func TestInvalidValues(t *testing.T) {
	tests := []struct {
		env  string
		want []string
	}{
		{"IGGY_KAFKA_BIND_ADDR=localhost", []string{"IGGY_KAFKA_BIND_ADDR", "host:port"}},
		{"IGGY_KAFKA_BIND_ADDR=h:99999", []string{"IGGY_KAFKA_BIND_ADDR"}},
		{"IGGY_KAFKA_BRIDGE_ENABLED=yes", []string{"IGGY_KAFKA_BRIDGE_ENABLED", "true or false"}},
		{"IGGY_KAFKA_AUTO_CREATE_TOPICS_PARTITIONS=0", []string{"AUTO_CREATE_TOPICS_PARTITIONS", "from 1 to 1000"}},
		{"IGGY_KAFKA_AUTO_CREATE_TOPICS_PARTITIONS=1001", []string{"from 1 to 1000"}},
		{"IGGY_KAFKA_NODE_ID=-1", []string{"NODE_ID", "from 0 to 32767"}},
		{"IGGY_KAFKA_IDLE_TIMEOUT=10", []string{"IDLE_TIMEOUT", "Go duration"}},
		{"IGGY_KAFKA_READ_TIMEOUT=-5s", []string{"READ_TIMEOUT", "positive"}},
		{"IGGY_KAFKA_MAX_FRAME_SIZE=3GiB", []string{"MAX_FRAME_SIZE", "2147483647"}},
		{"IGGY_KAFKA_MAX_FRAME_SIZE=lots", []string{"MAX_FRAME_SIZE"}},
		{"IGGY_KAFKA_LOG_FORMAT=xml", []string{"LOG_FORMAT", "text|json"}},
		{"IGGY_KAFKA_LOG_LEVEL=loud", []string{"LOG_LEVEL"}},
		{"IGGY_KAFKA_COORDINATOR_LOG_ENABLED=maybe", []string{"COORDINATOR_LOG_ENABLED", "auto|true|false"}},
		{"IGGY_KAFKA_COORDINATOR_LOG_RECOVERY=maybe", []string{"COORDINATOR_LOG_RECOVERY", "fallback|fail|skip"}},
		{"IGGY_KAFKA_MAX_CONNECTIONS=0", []string{"MAX_CONNECTIONS"}},
		{"IGGY_KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=-1", []string{"GROUP_INITIAL_REBALANCE_DELAY_MS", "milliseconds"}},
		{"IGGY_KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=3s", []string{"GROUP_INITIAL_REBALANCE_DELAY_MS", "milliseconds"}},
		{"IGGY_KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=2147483648", []string{"GROUP_INITIAL_REBALANCE_DELAY_MS", "2147483647"}},
		{"IGGY_KAFKA_MAX_CONNECTIONS_PER_ADDRESS=-1", []string{"MAX_CONNECTIONS_PER_ADDRESS", "from 0 to"}},
		{"IGGY_KAFKA_IGGY_POOL_SIZE=0", []string{"IGGY_POOL_SIZE", "from 1 to 256"}},
		{"IGGY_KAFKA_IGGY_POOL_SIZE=257", []string{"IGGY_POOL_SIZE", "from 1 to 256"}},
		{"IGGY_KAFKA_IGGY_STREAM=__iggy_kafka_gateway", []string{"IGGY_STREAM", "reserved"}},
	}
	for _, tt := range tests {
		_, err := load(t, nil, tt.env)
		if err == nil {
			t.Errorf("%s accepted", tt.env)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tt.env, err, w)
			}
		}
	}
	if _, err := load(t, []string{"--idle-timeout=soon"}); err == nil || !strings.Contains(err.Error(), "--idle-timeout") {
		t.Errorf("bad flag value: %v", err)
	}
	if _, err := load(t, []string{"--bind-adrr=x"}); err == nil {
		t.Error("unknown flag accepted")
	}
	if _, err := load(t, []string{"stray"}); err == nil {
		t.Error("positional argument accepted")
	}
}

func TestCrossFieldRules(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"wildcard bind needs advertised host", nil, []string{"IGGY_KAFKA_BIND_ADDR=0.0.0.0:9093"}, "ADVERTISED_HOST"},
		{"ipv6 wildcard", nil, []string{"IGGY_KAFKA_BIND_ADDR=[::]:9093"}, "ADVERTISED_HOST"},
		{"empty advertised host", nil, []string{"IGGY_KAFKA_ADVERTISED_HOST="}, "ADVERTISED_HOST"},
		{"bridge needs password", nil, []string{"IGGY_KAFKA_BRIDGE_ENABLED=true"}, "IGGY_PASSWORD is required"},
		{"dev with iggy addr", []string{"--dev"}, []string{"IGGY_KAFKA_IGGY_ADDR=1.2.3.4:8090"}, "dev mode"},
		{"dev with bridge flag", []string{"--dev", "--bridge-enabled=false"}, nil, "dev mode"},
		{"dev on all interfaces", []string{"--dev"}, []string{"IGGY_KAFKA_DEV_IGGY_ADDR=0.0.0.0:8090"}, "DEV_IGGY_EXPOSE"},
		{"dev on all ipv6 interfaces", []string{"--dev"}, []string{"IGGY_KAFKA_DEV_IGGY_ADDR=[::]:8090"}, "DEV_IGGY_EXPOSE"},
		{"dev on an empty host", []string{"--dev"}, []string{"IGGY_KAFKA_DEV_IGGY_ADDR=:8090"}, "DEV_IGGY_EXPOSE"},
		{"dev on a public address", []string{"--dev"}, []string{"IGGY_KAFKA_DEV_IGGY_ADDR=192.0.2.7:8090"}, "DEV_IGGY_EXPOSE"},
		{"dev on a host name", []string{"--dev"}, []string{"IGGY_KAFKA_DEV_IGGY_ADDR=iggy.example:8090"}, "DEV_IGGY_EXPOSE"},
		{"listeners with bind addr", nil, []string{"IGGY_KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:9093", "IGGY_KAFKA_BIND_ADDR=127.0.0.1:9094"}, "cannot be combined"},
		{"listeners bad name", nil, []string{"IGGY_KAFKA_LISTENERS=INTERNAL://127.0.0.1:9093"}, "NAME one of"},
		{"listeners ssl without cert", nil, []string{"IGGY_KAFKA_LISTENERS=SSL://127.0.0.1:9093"}, "TLS_CERT_FILE"},
		{"listeners twice", nil, []string{"IGGY_KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:1,PLAINTEXT://127.0.0.1:2"}, "twice"},
		{"listeners wildcard", nil, []string{"IGGY_KAFKA_LISTENERS=PLAINTEXT://0.0.0.0:9093"}, "ADVERTISED_LISTENERS"},
		{"advertised without listeners", nil, []string{"IGGY_KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://h:1"}, "needs"},
		{"advertised unknown name", nil, []string{"IGGY_KAFKA_LISTENERS=PLAINTEXT://0.0.0.0:9093", "IGGY_KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://h:1,SSL://h:2"}, "SSL"},
		{"iggy tls domain without tls", nil, []string{"IGGY_KAFKA_IGGY_TLS_DOMAIN=iggy.local"}, "IGGY_TLS_ENABLED=true"},
		{"iggy tls ca without tls", nil, []string{"IGGY_KAFKA_IGGY_TLS_CA_FILE=/ca.pem"}, "IGGY_TLS_ENABLED=true"},
		{"preauth above max", nil, []string{"IGGY_KAFKA_MAX_FRAME_SIZE=1KiB"}, "PREAUTH_MAX_FRAME_SIZE"},
		{"metrics credentials without metrics", nil, []string{"IGGY_KAFKA_METRICS_BEARER_TOKEN=t"}, "METRICS_ADDR"},
		{"metrics user without password", nil, []string{"IGGY_KAFKA_METRICS_ADDR=127.0.0.1:9094", "IGGY_KAFKA_METRICS_USERNAME=p"}, "go together"},
		{"metrics password without user", nil, []string{"IGGY_KAFKA_METRICS_ADDR=127.0.0.1:9094", "IGGY_KAFKA_METRICS_PASSWORD=p"}, "go together"},
	}
	for _, tt := range tests {
		_, err := load(t, tt.args, tt.env...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestListeners(t *testing.T) {
	c, err := load(t, nil, "IGGY_KAFKA_LISTENERS=PLAINTEXT://0.0.0.0:9093", "IGGY_KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://gw1:19093")
	if err != nil {
		t.Fatal(err)
	}
	want := Listener{Name: "PLAINTEXT", Protocol: "PLAINTEXT", Addr: "0.0.0.0:9093", AdvertisedHost: "gw1", AdvertisedPort: 19093}
	if len(c.Listeners) != 1 || c.Listeners[0] != want {
		t.Errorf("listeners = %+v", c.Listeners)
	}
}

func TestDevMode(t *testing.T) {
	for _, in := range []struct {
		args []string
		env  []string
	}{{[]string{"--dev"}, nil}, {nil, []string{"IGGY_KAFKA_DEV=true"}}, {[]string{"--dev=true"}, []string{"IGGY_KAFKA_DEV_IGGY_ADDR=127.0.0.1:18090"}}} {
		c, err := load(t, in.args, in.env...)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Dev || !c.Bridge.Enabled || c.Bridge.Addr != c.DevIggyAddr || c.Bridge.Username != "iggy" || c.Bridge.Password.Reveal() != "iggy" {
			t.Errorf("%v %v: %+v", in.args, in.env, c.Bridge)
		}
	}
}

func TestTopicMapFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "map.toml")
	os.WriteFile(path, []byte("default_stream = \"from_file\"\n[topics.orders]\nstream = \"billing\"\n"), 0o600)
	c, err := load(t, nil, "IGGY_KAFKA_TOPIC_MAP_PATH="+path, "IGGY_KAFKA_IGGY_STREAM=from_env")
	if err != nil {
		t.Fatal(err)
	}
	if c.DefaultStream != "from_file" || c.TopicMap.Resolve("orders").Stream != "billing" {
		t.Errorf("map: default %q, orders → %v", c.DefaultStream, c.TopicMap.Resolve("orders"))
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "IGGY_STREAM") {
		t.Errorf("warnings = %v", c.Warnings)
	}
	_, err = load(t, nil, "IGGY_KAFKA_TOPIC_MAP_PATH="+filepath.Join(t.TempDir(), "nope.toml"))
	if err == nil || !strings.Contains(err.Error(), "TOPIC_MAP_PATH") {
		t.Errorf("missing file: %v", err)
	}
}

func TestHelpListsEverySetting(t *testing.T) {
	if _, err := Load([]string{"--help"}, nil); !errors.Is(err, ErrHelp) {
		t.Fatalf("err = %v, want ErrHelp", err)
	}
	var out bytes.Buffer
	WriteUsage(&out)
	help := out.String()
	for _, s := range settings {
		for _, want := range []string{"--" + s.flag(), s.env()} {
			if !strings.Contains(help, want) {
				t.Errorf("--help lacks %s", want)
			}
		}
		if s.def != "" && !s.secret && !strings.Contains(help, "default: "+s.def) {
			t.Errorf("--help lacks the default of %s (%s)", s.name, s.def)
		}
	}
	for _, want := range []string{"default: 127.0.0.1:9093", "default: 100MiB", "default: 10m0s"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	c, err := load(t, nil, "IGGY_KAFKA_BRIDGE_ENABLED=true", "IGGY_KAFKA_IGGY_PASSWORD=hunter2")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c.Bridge), fmt.Sprintf("%v", c.Bridge.Password)} {
		if strings.Contains(s, "hunter2") {
			t.Fatalf("password printed: %s", s)
		}
	}
	_, err = load(t, nil, "IGGY_KAFKA_BRIDGE_ENABLED=true", "IGGY_KAFKA_IGGY_PASSWORD=hunter2", "IGGY_KAFKA_NODE_ID=x")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v", err)
	}
}

func TestSizes(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"1", 1, true}, {"1024", 1024, true}, {"512KiB", 512 << 10, true}, {"100MiB", 100 << 20, true},
		{"1GiB", 1 << 30, true}, {"10B", 10, true}, {"1.5MiB", 0, false}, {"-1", 0, false}, {"KiB", 0, false},
		{"2048MiB", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseSize(tt.in)
		if ok && (got < 1 || got > maxSize) {
			ok = false
		}
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parseSize(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	for _, n := range []int{1, 1000, 1 << 10, 3 << 20, 1 << 30} {
		if got, ok := parseSize(formatSize(n)); !ok || got != n {
			t.Errorf("formatSize(%d) = %q does not round-trip", n, formatSize(n))
		}
	}
}

// Dev mode's Iggy server (root iggy/iggy) binds loopback addresses, and others only when
// DEV_IGGY_EXPOSE says so, with a warning.
func TestDevIggyAddr(t *testing.T) {
	for _, tt := range []struct {
		addr, expose string
		warn         bool
	}{
		{"127.0.0.1:8090", "", false},
		{"127.0.0.2:8090", "", false},
		{"[::1]:8090", "", false},
		{"localhost:8090", "", false},
		{"0.0.0.0:8090", "true", true},
		{"192.0.2.7:8090", "true", true},
	} {
		env := []string{"IGGY_KAFKA_DEV_IGGY_ADDR=" + tt.addr}
		if tt.expose != "" {
			env = append(env, "IGGY_KAFKA_DEV_IGGY_EXPOSE="+tt.expose)
		}
		c, err := load(t, []string{"--dev"}, env...)
		if err != nil {
			t.Errorf("%s: %v", tt.addr, err)
			continue
		}
		warned := strings.Contains(strings.Join(c.Warnings, "\n"), "DEV_IGGY_EXPOSE=true")
		if c.Bridge.Addr != tt.addr || warned != tt.warn {
			t.Errorf("%s: bridge %s, warned %v (%q); want warned %v", tt.addr, c.Bridge.Addr, warned, c.Warnings, tt.warn)
		}
	}
}

// /metrics beyond loopback without credentials is warned about: it names every topic and group.
func TestMetricsExposureWarning(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		warn bool
	}{
		{[]string{"IGGY_KAFKA_METRICS_ADDR=127.0.0.1:9094"}, false},
		{[]string{"IGGY_KAFKA_METRICS_ADDR=0.0.0.0:9094"}, true},
		{[]string{"IGGY_KAFKA_METRICS_ADDR=0.0.0.0:9094", "IGGY_KAFKA_METRICS_BEARER_TOKEN=t"}, false},
		{[]string{"IGGY_KAFKA_METRICS_ADDR=0.0.0.0:9094", "IGGY_KAFKA_METRICS_USERNAME=u", "IGGY_KAFKA_METRICS_PASSWORD=p"}, false},
	} {
		c, err := load(t, nil, tt.env...)
		if err != nil {
			t.Fatalf("%v: %v", tt.env, err)
		}
		if warned := strings.Contains(strings.Join(c.Warnings, "\n"), "without authentication"); warned != tt.warn {
			t.Errorf("%v: warned %v (%q), want %v", tt.env, warned, c.Warnings, tt.warn)
		}
	}
}

func TestIggySeedList(t *testing.T) {
	tests := []struct {
		name, value string
		want        string // the stored list; empty when the value is refused
		errPart     string // what the refusal must name
	}{
		{"one address", "iggy:8090", "iggy:8090", ""},
		{"three seeds", "iggy-0:8090,iggy-1:8091,iggy-2:8092", "iggy-0:8090,iggy-1:8091,iggy-2:8092", ""},
		{"spaces trimmed", " iggy-0:8090 , [::1]:8091", "iggy-0:8090,[::1]:8091", ""},
		{"bad entry named", "iggy-0:8090,iggy-1", "", `entry 2 "iggy-1" is not host:port`},
		{"bad port named", "iggy-0:8090,iggy-1:99999", "", `"iggy-1:99999"`},
		{"empty entry", "iggy-0:8090,,iggy-2:8092", "", "entry 2 is empty"},
		{"trailing comma", "iggy-0:8090,", "", "entry 2 is empty"},
		{"duplicate", "iggy-0:8090,iggy-0:8090", "", `"iggy-0:8090" is listed twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(t, nil, "IGGY_KAFKA_IGGY_ADDR="+tt.value)
			if tt.want != "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Bridge.Addr != tt.want {
					t.Errorf("Bridge.Addr = %q, want %q", c.Bridge.Addr, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errPart) || !strings.Contains(err.Error(), "IGGY_KAFKA_IGGY_ADDR") {
				t.Errorf("err = %v, want one naming IGGY_KAFKA_IGGY_ADDR and %s", err, tt.errPart)
			}
		})
	}
}

// The initial rebalance delay is Kafka's group.initial.rebalance.delay.ms: whole milliseconds,
// 0 allowed (Kafka's perf tools set it to 0 to join at once; issue 28).
func TestGroupInitialRebalanceDelay(t *testing.T) {
	tests := []struct {
		env  string
		want time.Duration
	}{
		{"IGGY_KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=0", 0},
		{"IGGY_KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=1500", 1500 * time.Millisecond},
		{"IGGY_KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=2147483647", 2147483647 * time.Millisecond},
	}
	for _, tt := range tests {
		c, err := load(t, nil, tt.env)
		if err != nil {
			t.Errorf("%s: %v", tt.env, err)
			continue
		}
		if c.GroupInitialRebalanceDelay != tt.want {
			t.Errorf("%s: delay %v, want %v", tt.env, c.GroupInitialRebalanceDelay, tt.want)
		}
	}
	c, err := load(t, []string{"--group-initial-rebalance-delay-ms=250"}, "IGGY_KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=0")
	if err != nil || c.GroupInitialRebalanceDelay != 250*time.Millisecond {
		t.Errorf("flag over env: %v, %v", c, err)
	}
}
