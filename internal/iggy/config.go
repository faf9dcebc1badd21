package iggy

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// Config configures a Client or Conn. Either Username/Password or Token (a personal access
// token, logged in with code 45) must be set.
type Config struct {
	// Addr is host:port of Iggy's TCP listener, or a comma-separated list of them: the seed
	// nodes of an Iggy cluster. The client reads the cluster's roster (GetClusterMetadata) from
	// any of them and sends every request to the primary, following it when it moves (see
	// router.go and docs/DEPLOYMENT.md).
	Addr     string
	Username string
	Password string
	Token    string // personal access token; wins over Username/Password when set

	// TLS, when non-nil, enables TLS with this configuration. Otherwise TLSEnabled builds one
	// from TLSDomain and TLSCAFile (default: system roots). Without a server name (TLSDomain, or
	// TLS.ServerName) each connection checks the host of the node it dials.
	TLS        *tls.Config
	TLSEnabled bool
	TLSDomain  string
	TLSCAFile  string

	PoolSize       int           // connections of a Client; default 4
	PingInterval   time.Duration // keepalive per connection; default 5 s, negative disables
	DialTimeout    time.Duration // TCP+TLS+login; default 10 s
	RequestTimeout time.Duration // bound for calls whose context has no deadline; default 30 s
	// FailoverTimeout bounds one search for the primary of an Iggy cluster (dead primary,
	// leaderless window); default 10 s, Iggy's own budget for a client to resume.
	FailoverTimeout time.Duration
	// RosterInterval is how often a Client reads the roster to notice a primary that moved
	// without failing a request; default 5 s, negative disables.
	RosterInterval time.Duration

	SDKName    string // reported at login; default "iggy-gateway-kafka"
	SDKVersion string // reported at login; default "0.1.0"

	// OnReconnect, if set, is called each time a connection logs in again after losing its
	// connection or session (an Iggy restart does that to every connection), once the new
	// session is established and before the request that reconnected is sent. It runs with
	// the connection held: it must return quickly and must not call the Client.
	OnReconnect func()

	Observer Observer // receives command outcomes and login rejections; default none
}

// Defaults.
const (
	DefaultPoolSize       = 4
	DefaultPingInterval   = 5 * time.Second
	DefaultDialTimeout    = 10 * time.Second
	DefaultRequestTimeout = 30 * time.Second
)

// normalize validates cfg and returns a copy with defaults filled in and TLS resolved.
func (cfg Config) normalize() (*Config, error) {
	if cfg.Addr == "" {
		return nil, errors.New("iggy: Config.Addr is required")
	}
	for _, a := range cfg.seeds() {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("iggy: Config.Addr entry %q: %w", a, err)
		}
	}
	if cfg.Token == "" {
		if err := wire.CheckName("username", cfg.Username); err != nil {
			return nil, fmt.Errorf("iggy: %w", err)
		}
		if len(cfg.Password) > wire.MaxNameLength {
			return nil, errors.New("iggy: password longer than 255 bytes")
		}
	} else if err := wire.CheckName("token", cfg.Token); err != nil {
		return nil, fmt.Errorf("iggy: %w", err)
	}
	if cfg.PoolSize <= 0 {
		cfg.PoolSize = DefaultPoolSize
	}
	if cfg.PingInterval == 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.FailoverTimeout <= 0 {
		cfg.FailoverTimeout = DefaultFailoverTimeout
	}
	if cfg.RosterInterval == 0 {
		cfg.RosterInterval = DefaultRosterInterval
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	if cfg.SDKName == "" {
		cfg.SDKName = "iggy-gateway-kafka"
	}
	if cfg.SDKVersion == "" {
		cfg.SDKVersion = "0.1.0"
	}
	if err := wire.CheckName("SDK name", cfg.SDKName); err != nil {
		return nil, fmt.Errorf("iggy: %w", err)
	}
	if err := wire.CheckName("SDK version", cfg.SDKVersion); err != nil {
		return nil, fmt.Errorf("iggy: %w", err)
	}
	if cfg.TLS == nil && cfg.TLSEnabled {
		t, err := cfg.buildTLS()
		if err != nil {
			return nil, err
		}
		cfg.TLS = t
	}
	return &cfg, nil
}

// seeds returns the addresses of Addr.
func (cfg *Config) seeds() []string {
	var out []string
	for a := range strings.SplitSeq(cfg.Addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// tlsFor returns the TLS configuration for a connection to addr: the server name is the host
// dialled unless one is configured.
func (cfg *Config) tlsFor(addr string) *tls.Config {
	if cfg.TLS.ServerName != "" {
		return cfg.TLS
	}
	t := cfg.TLS.Clone()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		t.ServerName = host
	}
	return t
}

func (cfg *Config) buildTLS() (*tls.Config, error) {
	t := &tls.Config{ServerName: cfg.TLSDomain, MinVersion: tls.VersionTLS12}
	if cfg.TLSCAFile != "" {
		pem, err := os.ReadFile(cfg.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("iggy: TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("iggy: TLS CA file %s holds no PEM certificate", cfg.TLSCAFile)
		}
		t.RootCAs = pool
	}
	return t, nil
}

func (cfg *Config) versionInfo() wire.ClientVersionInfo {
	return wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: cfg.SDKName, SDKVersion: cfg.SDKVersion}
}

// loginBody appends the Register body for cfg's credentials.
func (cfg *Config) loginBody(dst []byte) []byte {
	if cfg.Token != "" {
		return wire.AppendLoginPAT(dst, cfg.versionInfo(), cfg.Token)
	}
	return wire.AppendLoginUser(dst, cfg.versionInfo(), cfg.Username, cfg.Password)
}
