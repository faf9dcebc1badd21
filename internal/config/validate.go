package config

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// devCredentials are the root account of the in-memory Iggy server in dev mode.
const devCredentials = "iggy"

func (c *Config) validate(explicit map[string]bool) error {
	if err := c.checkBridgeTLS(explicit); err != nil {
		return err
	}
	if err := c.buildListeners(explicit); err != nil {
		return err
	}
	if err := c.buildPeers(explicit); err != nil {
		return err
	}
	if err := c.buildBridge(explicit); err != nil {
		return err
	}
	if err := c.buildTopicMap(explicit); err != nil {
		return err
	}
	if err := c.checkSecurity(explicit); err != nil {
		return err
	}
	if err := c.checkMetrics(); err != nil {
		return err
	}
	if err := c.buildGroupACL(explicit); err != nil {
		return err
	}
	c.sizeTailCache()
	if c.Limits.PreAuthMaxFrameSize > c.Limits.MaxFrameSize {
		return fmt.Errorf("%sPREAUTH_MAX_FRAME_SIZE (%d) must not exceed %sMAX_FRAME_SIZE (%d)",
			EnvPrefix, c.Limits.PreAuthMaxFrameSize, EnvPrefix, c.Limits.MaxFrameSize)
	}
	return nil
}

// checkMetrics checks the metrics endpoint's credentials, and warns when it serves its topic and
// group names beyond loopback to anyone (docs/METRICS.md, "Access").
func (c *Config) checkMetrics() error {
	auth := c.MetricsUsername != "" || c.MetricsPassword != "" || c.MetricsBearerToken != ""
	switch {
	case auth && c.MetricsAddr == "":
		return fmt.Errorf("%sMETRICS_USERNAME, _PASSWORD and _BEARER_TOKEN need %sMETRICS_ADDR", EnvPrefix, EnvPrefix)
	case (c.MetricsUsername == "") != (c.MetricsPassword == ""):
		return fmt.Errorf("%sMETRICS_USERNAME and %sMETRICS_PASSWORD go together: set both or neither", EnvPrefix, EnvPrefix)
	}
	if host, _, _ := splitHostPort(c.MetricsAddr); c.MetricsAddr != "" && !auth && !isLoopback(host) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%sMETRICS_ADDR=%s serves /metrics, which names every topic and consumer group, without authentication beyond loopback: set %sMETRICS_USERNAME/_PASSWORD or _BEARER_TOKEN, or publish the port to trusted networks only (docs/METRICS.md)", EnvPrefix, c.MetricsAddr, EnvPrefix))
	}
	return nil
}

// checkBridgeTLS refuses bridge TLS settings that would be ignored because bridge TLS is off.
func (c *Config) checkBridgeTLS(explicit map[string]bool) error {
	for _, name := range []string{"IGGY_TLS_DOMAIN", "IGGY_TLS_CA_FILE"} {
		if explicit[name] && !c.Bridge.TLSEnabled {
			return fmt.Errorf("%s%s only applies with %sIGGY_TLS_ENABLED=true", EnvPrefix, name, EnvPrefix)
		}
	}
	return nil
}

func (c *Config) buildListeners(explicit map[string]bool) error {
	if c.listenersSpec == "" {
		if c.advertisedListenersSpec != "" {
			return fmt.Errorf("%sADVERTISED_LISTENERS needs %sLISTENERS", EnvPrefix, EnvPrefix)
		}
		return c.singleListener(explicit)
	}
	for _, name := range []string{"BIND_ADDR", "ADVERTISED_HOST", "ADVERTISED_PORT", "SASL_ENABLED"} {
		if explicit[name] {
			return fmt.Errorf("%sLISTENERS cannot be combined with %s%s; use %sADVERTISED_LISTENERS", EnvPrefix, EnvPrefix, name, EnvPrefix)
		}
	}
	binds, err := parseListeners("LISTENERS", c.listenersSpec)
	if err != nil {
		return err
	}
	advertised := binds
	if c.advertisedListenersSpec != "" {
		if advertised, err = parseListeners("ADVERTISED_LISTENERS", c.advertisedListenersSpec); err != nil {
			return err
		}
	}
	for _, b := range binds {
		a, ok := findListener(advertised, b.Name)
		if !ok {
			return fmt.Errorf("%sADVERTISED_LISTENERS has no entry for listener %s", EnvPrefix, b.Name)
		}
		host, port, _ := splitHostPort(a.Addr)
		if isWildcard(host) || port == 0 {
			return fmt.Errorf("listener %s binds %s: set a reachable host and port for it in %sADVERTISED_LISTENERS", b.Name, b.Addr, EnvPrefix)
		}
		b.AdvertisedHost, b.AdvertisedPort = host, port
		c.Listeners = append(c.Listeners, b)
	}
	for _, a := range advertised {
		if _, ok := findListener(binds, a.Name); !ok {
			return fmt.Errorf("%sADVERTISED_LISTENERS names %s, which %sLISTENERS does not define", EnvPrefix, a.Name, EnvPrefix)
		}
	}
	return nil
}

func (c *Config) singleListener(explicit map[string]bool) error {
	host, port, _ := splitHostPort(c.BindAddr)
	protocol := "PLAINTEXT"
	switch {
	case c.SASLEnabled && c.TLSCertFile != "":
		protocol = "SASL_SSL"
	case c.SASLEnabled:
		protocol = "SASL_PLAINTEXT"
	case c.TLSCertFile != "":
		protocol = "SSL"
	}
	l := Listener{Name: protocol, Protocol: protocol, Addr: c.BindAddr, AdvertisedHost: host, AdvertisedPort: port}
	if explicit["ADVERTISED_HOST"] {
		if strings.TrimSpace(c.AdvertisedHost) == "" {
			return fmt.Errorf("invalid %sADVERTISED_HOST: empty (expected a host name or IP clients can reach)", EnvPrefix)
		}
		l.AdvertisedHost = c.AdvertisedHost
	} else if isWildcard(host) {
		return fmt.Errorf("%sBIND_ADDR=%s listens on all interfaces: set %sADVERTISED_HOST to the host clients should connect to", EnvPrefix, c.BindAddr, EnvPrefix)
	}
	// An advertised port of 0 (bind port 0 asks the OS for a free port) is filled in with the
	// real port once the listener is bound.
	if c.AdvertisedPort != 0 {
		l.AdvertisedPort = c.AdvertisedPort
	}
	c.Listeners = []Listener{l}
	return nil
}

// SecurityProtocols are the listener names accepted in LISTENERS, all of them served. Without a
// protocol map the name is the protocol, as in Kafka's default listener.security.protocol.map.
// docs/CONFIGURATION.md lists them from here (ListenersMarkdown).
var SecurityProtocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

func parseListeners(variable, spec string) ([]Listener, error) {
	var out []Listener
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		name, addr, ok := strings.Cut(part, "://")
		if !ok || !slices.Contains(SecurityProtocols, name) {
			return nil, fmt.Errorf("invalid %s%s entry %q: expected NAME://host:port with NAME one of %s", EnvPrefix, variable, part, strings.Join(SecurityProtocols, ", "))
		}
		if _, _, err := splitHostPort(addr); err != nil {
			return nil, fmt.Errorf("invalid %s%s entry %q: expected NAME://host:port", EnvPrefix, variable, part)
		}
		if _, dup := findListener(out, name); dup {
			return nil, fmt.Errorf("invalid %s%s: listener %s given twice", EnvPrefix, variable, name)
		}
		out = append(out, Listener{Name: name, Protocol: name, Addr: addr})
	}
	return out, nil
}

func findListener(ls []Listener, name string) (Listener, bool) {
	for _, l := range ls {
		if l.Name == name {
			return l, true
		}
	}
	return Listener{}, false
}

// isLoopback reports whether host names only the local machine: a loopback IP or
// "localhost" (not resolved: a name could resolve elsewhere).
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isWildcard(host string) bool {
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

func (c *Config) buildBridge(explicit map[string]bool) error {
	if !c.Dev {
		for _, name := range []string{"DEV_IGGY_ADDR", "DEV_IGGY_EXPOSE"} {
			if explicit[name] {
				c.Warnings = append(c.Warnings, EnvPrefix+name+" is ignored without dev mode")
			}
		}
		if c.Bridge.Enabled && c.Bridge.Password == "" {
			return fmt.Errorf("%sIGGY_PASSWORD is required when %sBRIDGE_ENABLED=true", EnvPrefix, EnvPrefix)
		}
		return nil
	}
	for _, name := range []string{"BRIDGE_ENABLED", "IGGY_ADDR", "IGGY_USERNAME", "IGGY_PASSWORD"} {
		if explicit[name] {
			return fmt.Errorf("%s%s cannot be combined with dev mode, which bridges to its own in-memory Iggy server (its address is %sDEV_IGGY_ADDR)", EnvPrefix, name, EnvPrefix)
		}
	}
	// The in-memory server's root account has a well-known password, so anyone who reaches it
	// owns the data: it stays on loopback unless the operator says otherwise (docs/SECURITY.md).
	if host, _, _ := splitHostPort(c.DevIggyAddr); !isLoopback(host) {
		if !c.DevIggyExpose {
			return fmt.Errorf("%sDEV_IGGY_ADDR=%s is not a loopback address: dev mode's Iggy server has the root account iggy/iggy, so it listens on loopback only (127.0.0.1, ::1, localhost); set %sDEV_IGGY_EXPOSE=true if it must be reachable from the network", EnvPrefix, c.DevIggyAddr, EnvPrefix)
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("%sDEV_IGGY_EXPOSE=true: dev mode's Iggy server listens on %s with the root account iggy/iggy: anyone who reaches it can read, change and delete everything", EnvPrefix, c.DevIggyAddr))
	}
	c.Bridge.Enabled = true
	c.Bridge.Addr = c.DevIggyAddr
	c.Bridge.Username = devCredentials
	c.Bridge.Password = devCredentials
	return nil
}

func (c *Config) buildTopicMap(explicit map[string]bool) error {
	var err error
	if c.TopicMapPath == "" {
		c.TopicMap, err = topicmap.New(c.DefaultStream, nil)
		if err != nil {
			return fmt.Errorf("invalid %sIGGY_STREAM=%q: %v", EnvPrefix, c.DefaultStream, err)
		}
		return nil
	}
	if c.TopicMap, err = topicmap.Load(c.TopicMapPath); err != nil {
		return fmt.Errorf("%sTOPIC_MAP_PATH: %w", EnvPrefix, err)
	}
	if explicit["IGGY_STREAM"] && c.DefaultStream != c.TopicMap.DefaultStream() {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%sIGGY_STREAM=%q is ignored: the topic map file sets default_stream=%q",
			EnvPrefix, c.DefaultStream, c.TopicMap.DefaultStream()))
	}
	c.DefaultStream = c.TopicMap.DefaultStream()
	return nil
}
