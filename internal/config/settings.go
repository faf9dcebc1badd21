package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// EnvPrefix prefixes every environment variable of the gateway.
const EnvPrefix = "IGGY_KAFKA_"

// setting is one configuration knob: an environment variable (EnvPrefix+name), a flag
// (lower-case name with dashes) and a parser that stores the value into a Config.
type setting struct {
	name   string // e.g. "BIND_ADDR"
	def    string // default, as the user would type it ("" = unset)
	usage  string
	form   string // accepted form, for error messages
	secret bool   // never printed
	isBool bool   // flag may be given without a value
	set    func(c *Config, v string) error
}

func (s *setting) env() string  { return EnvPrefix + s.name }
func (s *setting) flag() string { return strings.ToLower(strings.ReplaceAll(s.name, "_", "-")) }

// settings lists every knob, in the order --help shows them.
var settings = []*setting{
	// Process.
	boolSetting("DEV", false, "dev mode: run an in-memory Iggy server in-process and bridge to it (data lives in memory only)",
		func(c *Config) *bool { return &c.Dev }),
	strSetting("DEV_IGGY_ADDR", "127.0.0.1:8090", "host:port", "address of the in-memory Iggy server in dev mode (native Iggy clients can connect to it)",
		func(c *Config, v string) error { return hostPort(v, &c.DevIggyAddr) }),
	boolSetting("DEV_IGGY_EXPOSE", false, "dev mode: allow DEV_IGGY_ADDR to be a non-loopback address (its root account iggy/iggy is then reachable from the network)",
		func(c *Config) *bool { return &c.DevIggyExpose }),
	strSetting("LOG_FORMAT", "text", "text|json", "log format",
		func(c *Config, v string) error { return oneOf(v, &c.LogFormat, "text", "json") }),
	strSetting("LOG_LEVEL", "info", "debug|info|warn|error", "log level",
		func(c *Config, v string) error { return c.LogLevel.UnmarshalText([]byte(v)) }),

	// Kafka listeners.
	strSetting("BIND_ADDR", "127.0.0.1:9093", "host:port", "Kafka listener address (single-listener form)",
		func(c *Config, v string) error { return hostPort(v, &c.BindAddr) }),
	strSetting("ADVERTISED_HOST", "", "host name or IP", "host returned by Metadata and FindCoordinator (default: the bind host; required when binding 0.0.0.0 or ::)",
		func(c *Config, v string) error { c.AdvertisedHost = v; return nil }),
	intSetting("ADVERTISED_PORT", 0, 0, 65535, "port returned by Metadata and FindCoordinator (0: the bind port)",
		func(c *Config) *int { return &c.AdvertisedPort }),
	strSetting("LISTENERS", "", "NAME://host:port,...", "several listeners, Kafka style; NAME is the security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL). Exclusive with BIND_ADDR/ADVERTISED_HOST/ADVERTISED_PORT/SASL_ENABLED",
		func(c *Config, v string) error { c.listenersSpec = v; return nil }),
	strSetting("ADVERTISED_LISTENERS", "", "NAME://host:port,...", "advertised address per listener name (default: LISTENERS)",
		func(c *Config, v string) error { c.advertisedListenersSpec = v; return nil }),
	boolSetting("SASL_ENABLED", false, "SASL (PLAIN, OAUTHBEARER) on the single listener: SASL_PLAINTEXT, or SASL_SSL with TLS_CERT_FILE",
		func(c *Config) *bool { return &c.SASLEnabled }),
	strSetting("TLS_CERT_FILE", "", "PEM file", "listener certificate (PEM, with its chain) for SSL/SASL_SSL listeners; alone on the single listener it makes it SSL. Reloaded when the file changes and on SIGHUP",
		func(c *Config, v string) error { c.TLSCertFile = v; return nil }),
	strSetting("TLS_KEY_FILE", "", "PEM file", "private key of TLS_CERT_FILE (PEM)",
		func(c *Config, v string) error { c.TLSKeyFile = v; return nil }),
	strSetting("TLS_CLIENT_CA_FILE", "", "PEM file", "CA certificates (PEM) that verify client certificates on SSL listeners",
		func(c *Config, v string) error { c.TLSClientCAFile = v; return nil }),
	strSetting("TLS_CLIENT_AUTH", "none", "none|requested|required", "client certificates on SSL listeners: none, requested (verified when given) or required; a verified certificate maps to an Iggy user",
		func(c *Config, v string) error { return oneOf(v, &c.TLSClientAuth, "none", "requested", "required") }),
	strSetting("TLS_ANONYMOUS_PRINCIPAL", AnonymousPrincipal, "Iggy user name|"+BridgePrincipal, "with TLS_CLIENT_AUTH=requested, whom a client without a certificate acts as: the Iggy user of that name, with its Iggy permissions (none when no such user exists, as Kafka's ANONYMOUS principal); "+BridgePrincipal+" = the bridge account, unchecked, like PLAINTEXT (warned at startup)",
		func(c *Config, v string) error {
			if v == "" {
				return fmt.Errorf("empty (expected an Iggy user name or %s)", BridgePrincipal)
			}
			c.TLSAnonymousPrincipal = v
			return nil
		}),
	optionalDurationSetting("SASL_SESSION_LIFETIME", "1h", "SASL session lifetime (KIP-368): clients re-authenticate, as the same user, before it ends, else the connection closes at their next request; the bound on how long a changed password or a deleted token keeps an open connection (0: sessions never expire; docs/SECURITY.md)",
		func(c *Config) *time.Duration { return &c.SASLSessionLifetime }),
	durationSetting("TLS_RELOAD_INTERVAL", 10*time.Second, "how often the TLS certificate, key and client CA files are checked for changes",
		func(c *Config) *time.Duration { return &c.TLSReloadInterval }),
	durationSetting("AUTHZ_REFRESH_INTERVAL", 10*time.Second, "how long an identified user's Iggy permissions (and its existence) are trusted before they are read again: the bound on how late a revoked permission, or a deleted, deactivated or replaced user, takes effect on open connections (docs/SECURITY.md)",
		func(c *Config) *time.Duration { return &c.AuthzRefreshInterval }),
	strSetting("TLS_PRINCIPAL_MAPPING_RULES", "", "rules", "client certificate subject → Iggy user name, Kafka's ssl.principal.mapping.rules syntax (RULE:pattern/replacement/[LU], DEFAULT; default DEFAULT: the whole subject)",
		func(c *Config, v string) error { c.TLSPrincipalMappingRules = v; return nil }),

	// Bridge to Iggy.
	boolSetting("BRIDGE_ENABLED", false, "connect to Iggy; when off, data and topic APIs store nothing and say so",
		func(c *Config) *bool { return &c.Bridge.Enabled }),
	strSetting("IGGY_ADDR", "127.0.0.1:8090", "host:port[,host:port...]", "Iggy TCP address, or the seed nodes of an Iggy cluster: the gateway reads the cluster's roster from any of them and follows its primary (docs/DEPLOYMENT.md)",
		func(c *Config, v string) error { return seedList(v, &c.Bridge.Addr) }),
	strSetting("IGGY_USERNAME", "iggy", "user name", "Iggy account of the bridge",
		func(c *Config, v string) error { c.Bridge.Username = v; return nil }),
	{name: "IGGY_PASSWORD", form: "password", secret: true,
		usage: "password of the bridge account (required with BRIDGE_ENABLED; never logged)",
		set:   func(c *Config, v string) error { c.Bridge.Password = Secret(v); return nil }},
	durationSetting("IGGY_CONNECT_RETRY", 60*time.Second, "how long startup retries a refused or timed-out Iggy connection before failing",
		func(c *Config) *time.Duration { return &c.Bridge.RetryWindow }),
	intSetting("IGGY_POOL_SIZE", 4, 1, 256, "connections to Iggy that Kafka requests share (Iggy serves one request at a time per connection)",
		func(c *Config) *int { return &c.Bridge.PoolSize }),
	boolSetting("IGGY_TLS_ENABLED", false, "TLS on the gateway→Iggy connection",
		func(c *Config) *bool { return &c.Bridge.TLSEnabled }),
	strSetting("IGGY_TLS_DOMAIN", "", "host name", "server name checked on the Iggy TLS connection (default: the host of the IGGY_ADDR entry or roster node dialled)",
		func(c *Config, v string) error { c.Bridge.TLSDomain = v; return nil }),
	strSetting("IGGY_TLS_CA_FILE", "", "PEM file", "roots for the Iggy TLS connection (default: system roots)",
		func(c *Config, v string) error { c.Bridge.TLSCAFile = v; return nil }),
	strSetting("IGGY_STREAM", "kafka", "stream name", "default Iggy stream (a topic map file replaces it)",
		func(c *Config, v string) error { c.DefaultStream = v; return nil }),
	strSetting("TOPIC_MAP_PATH", "", "path", "TOML topic map (see docs/CONFIGURATION.md)",
		func(c *Config, v string) error { c.TopicMapPath = v; return nil }),
	strSetting("GROUP_ACL_PATH", "", "path", "TOML file of consumer group ACLs for identified principals: [[group_acl]] bindings of principal, group name or prefix, operations (docs/SECURITY.md, \"Consumer groups\")",
		func(c *Config, v string) error { c.GroupACLPath = v; return nil }),
	strSetting("GROUP_ACL_DEFAULT", "user-prefix", "user-prefix|none|topics|all", "consumer groups no GROUP_ACL_PATH binding grants: user-prefix = each user may use the groups whose names start with its user name and a dot, none = nothing, topics = any group whose committed topics the user may all poll (no tenant boundary), all = every group (no tenant boundary)",
		func(c *Config, v string) error {
			return oneOf(v, &c.GroupACLDefault, "user-prefix", "none", "topics", "all")
		}),

	// Kafka semantics.
	boolSetting("AUTO_CREATE_TOPICS_ENABLED", false, "Metadata creates missing topics",
		func(c *Config) *bool { return &c.AutoCreateTopics }),
	intSetting("AUTO_CREATE_TOPICS_PARTITIONS", 1, 1, 1000, "partitions of auto-created topics",
		func(c *Config) *int { return &c.AutoCreatePartitions }),
	strSetting("TOPIC_FLUSH", "write", "write|fsync|iggy-default", "flush options of the Iggy topics the gateway creates (Kafka topics, auto-created ones, the coordinator log): write = each acknowledged write is in Iggy's segment file before the answer (survives an Iggy process crash), fsync = also fsynced (survives a machine crash), iggy-default = Iggy's buffering (up to 1024 messages or 1 MiB per partition in memory: an Iggy crash loses acknowledged writes); see docs/DURABILITY.md",
		func(c *Config, v string) error { return oneOf(v, &c.TopicFlush, "write", "fsync", "iggy-default") }),
	boolSetting("IDEMPOTENT_PRODUCERS", true, "idempotent producers: a retried batch of a producer (producer id and sequence) is written once per partition, in order (docs/IDEMPOTENCE.md); false: every batch is written as sent (at-least-once)",
		func(c *Config) *bool { return &c.IdempotentProducers }),
	durationSetting("PRODUCER_EXPIRY", 24*time.Hour, "a producer without writes to a partition for this long is forgotten there (Kafka's producer.id.expiration.ms)",
		func(c *Config) *time.Duration { return &c.ProducerExpiry }),
	intSetting("PRODUCER_REBUILD_MESSAGES", 10000, 0, 1000000, "how many of a partition's last messages are read, before its first idempotent write after a start, to recognise retries of batches written before the start (0: none)",
		func(c *Config) *int { return &c.ProducerRebuildMessages }),
	tailCacheSetting(),
	millisSetting("GROUP_INITIAL_REBALANCE_DELAY_MS", 3*time.Second, "Kafka's group.initial.rebalance.delay.ms: how long a consumer group that starts empty waits for more members before its first rebalance completes, extended while members keep joining up to the rebalance timeout (0: no delay)",
		func(c *Config) *time.Duration { return &c.GroupInitialRebalanceDelay }),
	strSetting("BROKERS", "", "id@host:port,...", "every gateway of a multi-gateway deployment, this one included, each at the address it advertises (docs/DEPLOYMENT.md; unset: a single gateway)",
		func(c *Config, v string) error { c.Brokers = v; return nil }),
	intSetting("NODE_ID", 1, 0, MaxNodeID, "this gateway's broker id (unique per gateway; also the high bits of producer ids)",
		func(c *Config) *int { return &c.NodeID }),
	strSetting("COORDINATOR_LOG_ENABLED", "auto", "auto|true|false", "with BROKERS, share group coordination and the controller among the live gateways through the coordinator log in Iggy: auto = on when the bridge account may (else a warning and off), true = on or refuse to start, false = the lowest node id coordinates every group and is the controller",
		func(c *Config, v string) error { return oneOf(v, &c.CoordinatorLog, "auto", "true", "false") }),
	strSetting("COORDINATOR_LOG_RECOVERY", "fallback", "fallback|fail|skip", "damaged coordinator log at startup: fallback = recover from an earlier checkpoint or a full replay (logged), fail = refuse to start, skip = fallback and also skip corrupt records (their commits are lost)",
		func(c *Config, v string) error {
			return oneOf(v, &c.CoordinatorLogRecovery, "fallback", "fail", "skip")
		}),
	strSetting("METRICS_ADDR", "", "host:port", "HTTP address of Prometheus /metrics, /healthz and /readyz (unset: off)",
		func(c *Config, v string) error {
			if v == "" {
				c.MetricsAddr = ""
				return nil
			}
			return hostPort(v, &c.MetricsAddr)
		}),
	strSetting("METRICS_USERNAME", "", "user name", "HTTP basic authentication on /metrics: the user name (with METRICS_PASSWORD); /healthz and /readyz stay open (docs/METRICS.md)",
		func(c *Config, v string) error { c.MetricsUsername = v; return nil }),
	{name: "METRICS_PASSWORD", form: "password", secret: true,
		usage: "HTTP basic authentication on /metrics: the password (never logged)",
		set:   func(c *Config, v string) error { c.MetricsPassword = Secret(v); return nil }},
	{name: "METRICS_BEARER_TOKEN", form: "token", secret: true,
		usage: "bearer token /metrics accepts (Authorization: Bearer ...), alone or besides basic authentication (never logged)",
		set:   func(c *Config, v string) error { c.MetricsBearerToken = Secret(v); return nil }},

	// Limits and timeouts.
	sizeSetting("MAX_FRAME_SIZE", 100<<20, "largest request frame accepted; bigger frames close the connection",
		func(c *Config) *int { return &c.Limits.MaxFrameSize }),
	sizeSetting("PREAUTH_MAX_FRAME_SIZE", 512<<10, "largest request frame before SASL authentication (SASL listeners only)",
		func(c *Config) *int { return &c.Limits.PreAuthMaxFrameSize }),
	sizeSetting("MAX_REQUEST_MEMORY", 1<<30, "request memory in use at once across all connections (frames, decoded requests, Fetch reads, responses; docs/LIMITS.md); when used up, connections stop reading until requests are answered",
		func(c *Config) *int { return &c.Limits.MaxRequestMemory }),
	sizeSetting("MAX_REQUEST_MEMORY_PER_ADDRESS", 256<<20, "share of MAX_REQUEST_MEMORY the connections of one client IP address may hold together",
		func(c *Config) *int { return &c.Limits.MaxRequestMemoryPerAddress }),
	intSetting("MAX_CONNECTIONS", 1024, 1, 1<<20, "Kafka connections served at once; more are closed on accept",
		func(c *Config) *int { return &c.Limits.MaxConnections }),
	intSetting("MAX_CONNECTIONS_PER_ADDRESS", 0, 0, 1<<20, "Kafka connections from one client IP address at once; more are closed on accept (0: no cap, as Kafka's max.connections.per.ip; MAX_CONNECTIONS and the request memory budget still hold)",
		func(c *Config) *int { return &c.Limits.MaxConnectionsPerAddress }),
	intSetting("MAX_IN_FLIGHT_PER_CONNECTION", 16, 1, 1024, "requests read ahead and in flight per connection",
		func(c *Config) *int { return &c.Limits.MaxInFlight }),
	intSetting("MAX_CONCURRENT_AUTHENTICATIONS", 4, 1, 1024, "SASL credential checks at once (SASL listeners only)",
		func(c *Config) *int { return &c.Limits.MaxConcurrentAuthentications }),
	durationSetting("IDLE_TIMEOUT", 10*time.Minute, "close a connection that sends no request for this long",
		func(c *Config) *time.Duration { return &c.Limits.IdleTimeout }),
	durationSetting("FIRST_REQUEST_TIMEOUT", 10*time.Second, "close a connection that has not sent a whole first request this long after it opened",
		func(c *Config) *time.Duration { return &c.Limits.FirstRequestTimeout }),
	durationSetting("READ_TIMEOUT", 15*time.Second, "time to receive the rest of a frame once its length arrived",
		func(c *Config) *time.Duration { return &c.Limits.ReadTimeout }),
	durationSetting("WRITE_TIMEOUT", 10*time.Second, "time to write one response",
		func(c *Config) *time.Duration { return &c.Limits.WriteTimeout }),
	durationSetting("SHUTDOWN_DRAIN_TIMEOUT", 25*time.Second, "on SIGTERM/SIGINT, how long in-flight requests may finish",
		func(c *Config) *time.Duration { return &c.Limits.ShutdownDrainTimeout }),
}

func strSetting(name, def, form, usage string, set func(*Config, string) error) *setting {
	return &setting{name: name, def: def, form: form, usage: usage, set: set}
}

func boolSetting(name string, def bool, usage string, field func(*Config) *bool) *setting {
	return &setting{name: name, def: strconv.FormatBool(def), form: "true or false", usage: usage, isBool: true,
		set: func(c *Config, v string) error {
			switch v {
			case "true":
				*field(c) = true
			case "false":
				*field(c) = false
			default:
				return errBadForm
			}
			return nil
		}}
}

func intSetting(name string, def, lo, hi int, usage string, field func(*Config) *int) *setting {
	return &setting{name: name, def: strconv.Itoa(def), form: fmt.Sprintf("an integer from %d to %d", lo, hi), usage: usage,
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				return errBadForm
			}
			*field(c) = n
			return nil
		}}
}

func durationSetting(name string, def time.Duration, usage string, field func(*Config) *time.Duration) *setting {
	return &setting{name: name, def: def.String(), form: `a positive Go duration such as "500ms", "15s", "10m" or "24h"`, usage: usage,
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return errBadForm
			}
			*field(c) = d
			return nil
		}}
}

// optionalDurationSetting is a duration that may be set to 0 (off).
func optionalDurationSetting(name, def, usage string, field func(*Config) *time.Duration) *setting {
	return &setting{name: name, def: def, form: `0 (off) or a positive Go duration such as "15m" or "1h"`, usage: usage,
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return errBadForm
			}
			*field(c) = d
			return nil
		}}
}

// millisSetting is a duration given in whole milliseconds, as Kafka's *.ms settings are, from 0
// to Kafka's int range.
func millisSetting(name string, def time.Duration, usage string, field func(*Config) *time.Duration) *setting {
	return &setting{name: name, def: strconv.FormatInt(def.Milliseconds(), 10), form: "milliseconds, an integer from 0 to 2147483647", usage: usage,
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 0 {
				return errBadForm
			}
			*field(c) = time.Duration(n) * time.Millisecond
			return nil
		}}
}

// maxSize keeps frame limits inside a Kafka int32 length prefix.
const maxSize = 1<<31 - 1

func sizeSetting(name string, def int, usage string, field func(*Config) *int) *setting {
	return sizeSettingFrom(name, def, 1, usage, field)
}

// sizeSettingFrom is a byte count of at least least.
func sizeSettingFrom(name string, def, least int, usage string, field func(*Config) *int) *setting {
	form := fmt.Sprintf(`a byte count from %d to 2147483647, optionally with a KiB, MiB or GiB suffix ("512KiB", "100MiB")`, least)
	return &setting{name: name, def: formatSize(def), form: form, usage: usage,
		set: func(c *Config, v string) error {
			n, ok := parseSize(v)
			if !ok || n < least || n > maxSize {
				return errBadForm
			}
			*field(c) = n
			return nil
		}}
}

var sizeUnits = []struct {
	suffix string
	mult   int
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}, {"", 1}}

func parseSize(v string) (int, bool) {
	for _, u := range sizeUnits {
		num, ok := strings.CutSuffix(v, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		if err != nil || n < 0 || n > maxSize/int64(u.mult) {
			return 0, false
		}
		return int(n) * u.mult, true
	}
	return 0, false
}

func formatSize(n int) string {
	for _, u := range sizeUnits[:3] {
		if n%u.mult == 0 {
			return fmt.Sprintf("%d%s", n/u.mult, u.suffix)
		}
	}
	return strconv.Itoa(n)
}

func hostPort(v string, dst *string) error {
	if _, _, err := splitHostPort(v); err != nil {
		return errBadForm
	}
	*dst = v
	return nil
}

// seedList accepts one host:port or a comma-separated list of them (Kafka's bootstrap.servers
// form), naming the entry that is not one, and stores the list with spaces trimmed.
func seedList(v string, dst *string) error {
	entries := strings.Split(v, ",")
	seen := make(map[string]bool, len(entries))
	for i, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			return fmt.Errorf("entry %d is empty", i+1)
		}
		if _, _, err := splitHostPort(e); err != nil {
			return fmt.Errorf("entry %d %q is not host:port", i+1, e)
		}
		if seen[e] {
			return fmt.Errorf("entry %q is listed twice", e)
		}
		seen[e] = true
		entries[i] = e
	}
	*dst = strings.Join(entries, ",")
	return nil
}

func oneOf(v string, dst *string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			*dst = v
			return nil
		}
	}
	return errBadForm
}
