// Package config reads the gateway's settings from IGGY_KAFKA_* environment variables, the
// command-line flags that mirror them, and the TOML topic map.
//
// Precedence: flag > environment > default. Every problem stops startup with a message that
// names the variable: a misspelt IGGY_KAFKA_* name or a value outside its accepted form
// (refused, never silently ignored).
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/groupacl"
	"github.com/iggygw/iggy-gateway-kafka/internal/producers"
	"github.com/iggygw/iggy-gateway-kafka/internal/sslprincipal"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// MaxNodeID is the largest node id: producer ids carry the node id (see internal/producers).
const MaxNodeID = producers.MaxNodeID

// Config is the validated configuration.
type Config struct {
	Dev         bool
	DevIggyAddr string
	// DevIggyExpose allows a non-loopback DevIggyAddr.
	DevIggyExpose bool
	LogFormat     string // "text" or "json"
	LogLevel      slog.Level

	// Listeners has at least one entry; the single-listener settings produce one PLAINTEXT
	// listener.
	Listeners []Listener
	NodeID    int
	// Peers are every gateway of a multi-gateway deployment (BROKERS), this one included;
	// empty for a single gateway.
	Peers []Peer

	Bridge Bridge

	DefaultStream string
	TopicMapPath  string
	TopicMap      *topicmap.Map
	// GroupACL is who may use which consumer group (GROUP_ACL_PATH, GROUP_ACL_DEFAULT).
	GroupACL        *groupacl.Policy
	GroupACLPath    string
	GroupACLDefault string

	AutoCreateTopics     bool
	AutoCreatePartitions int
	// TopicFlush is how new Iggy topics flush acknowledged writes: a durability.Mode
	// ("write", "fsync" or "iggy-default"; docs/DURABILITY.md).
	TopicFlush          string
	IdempotentProducers bool
	ProducerExpiry      time.Duration
	// ProducerRebuildMessages is how many of a partition's last messages are read to rebuild
	// its producer state before its first idempotent write (docs/IDEMPOTENCE.md §4).
	ProducerRebuildMessages int
	// TailCacheBytes bounds the tail cache of recently written batches (internal/tailcache);
	// 0 turns it off. By default ("auto") it is sized from the memory the process may use
	// (TailCacheAuto), and TailCacheSizedFrom says from what; it is empty when the size was set.
	TailCacheBytes     int
	TailCacheSizedFrom string
	tailCacheAuto      bool
	// GroupInitialRebalanceDelay is Kafka's group.initial.rebalance.delay.ms
	// (groups.Config.InitialRebalanceDelay); 0 turns the delay off.
	GroupInitialRebalanceDelay time.Duration
	// CoordinatorLog is "auto", "true" or "false": whether the gateways share group
	// coordination through the coordinator log's ownership (docs/DEPLOYMENT.md).
	CoordinatorLog string
	// CoordinatorLogRecovery is "fallback", "fail" or "skip" (docs/COORDINATOR-LOG.md §5).
	CoordinatorLogRecovery string
	MetricsAddr            string
	// MetricsUsername and MetricsPassword (basic) and MetricsBearerToken protect /metrics
	// when set.
	MetricsUsername    string
	MetricsPassword    Secret
	MetricsBearerToken Secret

	Limits Limits

	// SASLSessionLifetime (default 1 h), when positive, makes SASL sessions expire unless the client
	// re-authenticates (KIP-368); 0 disables expiry.
	SASLSessionLifetime time.Duration
	// TLSReloadInterval is how often the TLS files are checked for changes.
	TLSReloadInterval time.Duration
	// AuthzRefreshInterval is how long a user's permission snapshot is trusted.
	AuthzRefreshInterval time.Duration
	// PrincipalMapper maps client certificate subjects to Iggy users; set when SSL listeners
	// ask for client certificates.
	PrincipalMapper *sslprincipal.Mapper

	// Warnings are non-fatal remarks to log once logging is set up.
	Warnings []string

	// Raw settings, kept until validation turns them into the fields above or refuses them.
	BindAddr                string
	AdvertisedHost          string
	AdvertisedPort          int
	listenersSpec           string
	advertisedListenersSpec string
	SASLEnabled             bool
	TLSCertFile             string
	TLSKeyFile              string
	TLSClientCAFile         string
	TLSClientAuth           string
	// TLSAnonymousPrincipal is the user a client without a certificate acts as under
	// TLS_CLIENT_AUTH=requested, or BridgePrincipal.
	TLSAnonymousPrincipal    string
	TLSPrincipalMappingRules string
	Brokers                  string
}

// Bridge is the connection to Iggy.
type Bridge struct {
	Enabled     bool
	Addr        string // one host:port, or a comma-separated seed list of an Iggy cluster
	Username    string
	Password    Secret
	RetryWindow time.Duration
	PoolSize    int // connections shared by requests
	TLSEnabled  bool
	TLSDomain   string
	TLSCAFile   string
}

// Limits are the robustness limits (docs/LIMITS.md).
type Limits struct {
	MaxFrameSize                 int
	PreAuthMaxFrameSize          int
	MaxRequestMemory             int
	MaxRequestMemoryPerAddress   int
	MaxConnections               int
	MaxConnectionsPerAddress     int
	MaxInFlight                  int
	MaxConcurrentAuthentications int
	IdleTimeout                  time.Duration
	FirstRequestTimeout          time.Duration
	ReadTimeout                  time.Duration
	WriteTimeout                 time.Duration
	ShutdownDrainTimeout         time.Duration
}

// Listener is one Kafka listener.
type Listener struct {
	Name           string // security protocol name, e.g. "PLAINTEXT"
	Protocol       string
	Addr           string // bind host:port
	AdvertisedHost string
	AdvertisedPort int
}

// Secret is a string that never prints itself.
type Secret string

func (Secret) String() string                 { return "[redacted]" }
func (Secret) GoString() string               { return "[redacted]" }
func (Secret) LogValue() slog.Value           { return slog.StringValue("[redacted]") }
func (s Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// Reveal returns the secret for the one place that needs it (the Iggy login).
func (s Secret) Reveal() string { return string(s) }

// ErrHelp is returned by Load when --help or -h was given.
var ErrHelp = flag.ErrHelp

// errBadForm is returned by setting parsers; Load turns it into a message naming the variable.
var errBadForm = errors.New("bad form")

// Load builds the configuration from args (without the program name) and environ (KEY=VALUE
// entries, as os.Environ returns them). It returns ErrHelp for --help; the caller prints
// WriteUsage.
func Load(args, environ []string) (*Config, error) {
	c := &Config{}
	explicit := make(map[string]bool)
	for _, s := range settings {
		if err := s.set(c, s.def); err != nil && s.def != "" {
			panic(fmt.Sprintf("config: default of %s does not parse: %v", s.name, err))
		}
	}
	if err := applyEnv(c, environ, explicit); err != nil {
		return nil, err
	}
	if err := applyFlags(c, args, explicit); err != nil {
		return nil, err
	}
	if err := c.validate(explicit); err != nil {
		return nil, err
	}
	return c, nil
}

func lookupSetting(name string) *setting {
	for _, s := range settings {
		if s.name == name {
			return s
		}
	}
	return nil
}

func applyEnv(c *Config, environ []string, explicit map[string]bool) error {
	var unknown []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		name, ok := strings.CutPrefix(k, EnvPrefix)
		if !ok {
			continue
		}
		s := lookupSetting(name)
		if s == nil {
			unknown = append(unknown, k)
			continue
		}
		if err := s.set(c, v); err != nil {
			return valueError(s.env(), s, v, err)
		}
		explicit[s.name] = true
	}
	if len(unknown) > 0 {
		msgs := make([]string, len(unknown))
		for i, k := range unknown {
			msgs[i] = "unknown environment variable " + k + suggest(strings.TrimPrefix(k, EnvPrefix))
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

// suggest proposes the closest known name for a misspelt one.
func suggest(name string) string {
	best, bestDist := "", 4 // farther than 3 edits is not a typo
	for _, s := range settings {
		if d := editDistance(name, s.name); d < bestDist {
			best, bestDist = s.env(), d
		}
	}
	if best == "" {
		return " (see --help for the list)"
	}
	return " (did you mean " + best + "?)"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// flagValue adapts a setting to the flag package.
type flagValue struct {
	s        *setting
	c        *Config
	explicit map[string]bool
}

func (f flagValue) String() string   { return "" }
func (f flagValue) IsBoolFlag() bool { return f.s.isBool }
func (f flagValue) Set(v string) error {
	if err := f.s.set(f.c, v); err != nil {
		return valueError("--"+f.s.flag(), f.s, v, err)
	}
	f.explicit[f.s.name] = true
	return nil
}

func applyFlags(c *Config, args []string, explicit map[string]bool) error {
	fs := flag.NewFlagSet("iggy-gateway-kafka", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned; the caller prints usage for --help
	fs.Usage = func() {}
	for _, s := range settings {
		fs.Var(flagValue{s: s, c: c, explicit: explicit}, s.flag(), s.usage)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (settings are --name=value flags or %s* variables)", fs.Arg(0), EnvPrefix)
	}
	return nil
}

// WriteUsage writes the --help text: every setting with its variable, form and default.
func WriteUsage(out io.Writer) {
	fmt.Fprintf(out, "Usage: iggy-gateway-kafka [flags]\n\n")
	fmt.Fprintf(out, "A Kafka wire-protocol gateway that stores data in Apache Iggy.\n")
	fmt.Fprintf(out, "Every flag has an environment variable; flags win. Reference: docs/CONFIGURATION.md.\n\n")
	for _, s := range settings {
		def := s.def
		switch {
		case s.secret:
			def = "(required with the bridge, never shown)"
		case def == "":
			def = "(unset)"
		}
		fmt.Fprintf(out, "  --%s  %s\n      %s\n      accepted: %s; default: %s\n", s.flag(), s.env(), s.usage, s.form, def)
	}
}

func valueError(where string, s *setting, v string, err error) error {
	shown := fmt.Sprintf("%q", v)
	if s.secret {
		shown = "(hidden)"
	}
	if errors.Is(err, errBadForm) {
		return fmt.Errorf("invalid %s=%s: expected %s", where, shown, s.form)
	}
	return fmt.Errorf("invalid %s=%s: %v (expected %s)", where, shown, err, s.form)
}

func splitHostPort(v string) (string, int, error) {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return "", 0, err
	}
	p, err := parsePort(port)
	if err != nil {
		return "", 0, err
	}
	return host, p, nil
}

func parsePort(s string) (int, error) {
	var p int
	if _, err := fmt.Sscanf(s, "%d", &p); err != nil || p < 0 || p > 65535 || fmt.Sprint(p) != s {
		return 0, fmt.Errorf("bad port %q", s)
	}
	return p, nil
}
