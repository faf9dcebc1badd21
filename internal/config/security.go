package config

import (
	"fmt"
	"os"

	"github.com/iggygw/iggy-gateway-kafka/internal/sslprincipal"
)

// Listener security protocols.
const (
	ProtocolPlaintext     = "PLAINTEXT"
	ProtocolSSL           = "SSL"
	ProtocolSASLPlaintext = "SASL_PLAINTEXT"
	ProtocolSASLSSL       = "SASL_SSL"
)

// TLS reports whether the listener encrypts its connections.
func (l Listener) TLS() bool { return l.Protocol == ProtocolSSL || l.Protocol == ProtocolSASLSSL }

// SASL reports whether the listener authenticates its connections with SASL.
func (l Listener) SASL() bool {
	return l.Protocol == ProtocolSASLPlaintext || l.Protocol == ProtocolSASLSSL
}

// AnonymousPrincipal is the default TLS_ANONYMOUS_PRINCIPAL: Kafka's name for a client that
// presented no certificate. No Iggy user of that name exists unless the operator creates one,
// so such clients may do nothing that needs a permission.
const AnonymousPrincipal = "ANONYMOUS"

// BridgePrincipal, as TLS_ANONYMOUS_PRINCIPAL, lets clients without a certificate act as the
// bridge account, unchecked (the behaviour before the setting existed).
const BridgePrincipal = "BRIDGE"

// ClientCertificates reports whether the listener asks for client certificates: SSL listeners
// with TLS_CLIENT_AUTH other than none (on SASL_SSL, SASL establishes the identity).
func (c *Config) ClientCertificates(l Listener) bool {
	return l.Protocol == ProtocolSSL && c.TLSClientAuth != "none"
}

// checkSecurity checks that the TLS and SASL settings fit the listeners: what a listener
// needs is set, and nothing is set that no listener would use (an operator who sets a client
// CA believes client certificates are checked).
func (c *Config) checkSecurity(explicit map[string]bool) error {
	var tlsListener, sslListener, saslListener bool
	for _, l := range c.Listeners {
		tlsListener = tlsListener || l.TLS()
		sslListener = sslListener || l.Protocol == ProtocolSSL
		saslListener = saslListener || l.SASL()
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return fmt.Errorf("%sTLS_CERT_FILE and %sTLS_KEY_FILE go together: set both or neither", EnvPrefix, EnvPrefix)
	}
	if tlsListener && c.TLSCertFile == "" {
		return fmt.Errorf("SSL and SASL_SSL listeners need %sTLS_CERT_FILE and %sTLS_KEY_FILE", EnvPrefix, EnvPrefix)
	}
	if !tlsListener && c.TLSCertFile != "" {
		return fmt.Errorf("%sTLS_CERT_FILE is set but no listener uses TLS: add an SSL or SASL_SSL listener to %sLISTENERS", EnvPrefix, EnvPrefix)
	}
	for _, f := range []struct{ name, path string }{{"TLS_CERT_FILE", c.TLSCertFile}, {"TLS_KEY_FILE", c.TLSKeyFile}, {"TLS_CLIENT_CA_FILE", c.TLSClientCAFile}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return fmt.Errorf("%s%s: %v", EnvPrefix, f.name, err)
		}
	}
	if c.TLSClientAuth != "none" {
		if !sslListener {
			return fmt.Errorf("%sTLS_CLIENT_AUTH=%s needs an SSL listener (client certificates are not used on SASL_SSL, where SASL names the user)", EnvPrefix, c.TLSClientAuth)
		}
		if c.TLSClientCAFile == "" {
			return fmt.Errorf("%sTLS_CLIENT_AUTH=%s needs %sTLS_CLIENT_CA_FILE to verify client certificates", EnvPrefix, c.TLSClientAuth, EnvPrefix)
		}
		if !c.Bridge.Enabled {
			return fmt.Errorf("%sTLS_CLIENT_AUTH=%s needs the bridge: client certificates map to Iggy users", EnvPrefix, c.TLSClientAuth)
		}
		m, err := sslprincipal.Parse(c.TLSPrincipalMappingRules)
		if err != nil {
			return fmt.Errorf("%sTLS_PRINCIPAL_MAPPING_RULES: %v", EnvPrefix, err)
		}
		c.PrincipalMapper = m
		if c.TLSClientAuth == "requested" {
			switch c.TLSAnonymousPrincipal {
			case BridgePrincipal:
				c.Warnings = append(c.Warnings, fmt.Sprintf("%sTLS_ANONYMOUS_PRINCIPAL=%s: SSL clients without a certificate act as the bridge account, unchecked: anyone who can reach the SSL listener can do everything the bridge account can (docs/SECURITY.md)", EnvPrefix, BridgePrincipal))
			case c.Bridge.Username:
				c.Warnings = append(c.Warnings, fmt.Sprintf("%sTLS_ANONYMOUS_PRINCIPAL=%s is the bridge account: SSL clients without a certificate get all of its permissions (docs/SECURITY.md)", EnvPrefix, c.Bridge.Username))
			}
		}
	} else {
		for _, name := range []string{"TLS_CLIENT_CA_FILE", "TLS_PRINCIPAL_MAPPING_RULES"} {
			if name == "TLS_CLIENT_CA_FILE" && c.TLSClientCAFile != "" || name == "TLS_PRINCIPAL_MAPPING_RULES" && c.TLSPrincipalMappingRules != "" {
				return fmt.Errorf("%s%s only applies with %sTLS_CLIENT_AUTH=requested or required", EnvPrefix, name, EnvPrefix)
			}
		}
	}
	if saslListener && !c.Bridge.Enabled {
		return fmt.Errorf("SASL listeners need the bridge (%sBRIDGE_ENABLED=true): credentials are verified by logging in to Iggy", EnvPrefix)
	}
	if !saslListener && explicit["SASL_SESSION_LIFETIME"] && c.SASLSessionLifetime > 0 {
		return fmt.Errorf("%sSASL_SESSION_LIFETIME only applies to SASL listeners", EnvPrefix)
	}
	return nil
}
