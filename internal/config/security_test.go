package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

// pemFiles creates placeholder files: the configuration checks that they exist; their
// contents are checked by internal/tlsconfig when the listener starts.
func pemFiles(t *testing.T) (cert, key, ca string) {
	dir := t.TempDir()
	for _, p := range []*string{&cert, &key, &ca} {
		f, err := os.CreateTemp(dir, "*.pem")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		*p = f.Name()
	}
	return cert, key, ca
}

func TestSecureListeners(t *testing.T) {
	cert, key, ca := pemFiles(t)
	bridge := []string{"IGGY_KAFKA_BRIDGE_ENABLED=true", "IGGY_KAFKA_IGGY_PASSWORD=p"}
	tlsFiles := []string{"IGGY_KAFKA_TLS_CERT_FILE=" + cert, "IGGY_KAFKA_TLS_KEY_FILE=" + key}
	tests := []struct {
		name  string
		env   []string
		names []string // listener protocols, in order
	}{
		{"sasl single", append([]string{"IGGY_KAFKA_SASL_ENABLED=true"}, bridge...), []string{"SASL_PLAINTEXT"}},
		{"ssl single", tlsFiles, []string{"SSL"}},
		{"sasl_ssl single", append(append([]string{"IGGY_KAFKA_SASL_ENABLED=true"}, tlsFiles...), bridge...), []string{"SASL_SSL"}},
		{"all four", append(append([]string{
			"IGGY_KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093,SASL_PLAINTEXT://127.0.0.1:9094,SASL_SSL://127.0.0.1:9095",
			"IGGY_KAFKA_TLS_CLIENT_AUTH=required", "IGGY_KAFKA_TLS_CLIENT_CA_FILE=" + ca,
			"IGGY_KAFKA_TLS_PRINCIPAL_MAPPING_RULES=RULE:^CN=(.*?),.*$/$1/L,DEFAULT",
			"IGGY_KAFKA_SASL_SESSION_LIFETIME=1h",
		}, tlsFiles...), bridge...), []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}},
	}
	for _, tt := range tests {
		c, err := load(t, nil, tt.env...)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var got []string
		for _, l := range c.Listeners {
			got = append(got, l.Protocol)
		}
		if strings.Join(got, ",") != strings.Join(tt.names, ",") {
			t.Errorf("%s: listeners %v, want %v", tt.name, got, tt.names)
		}
	}
}

func TestSecurityRules(t *testing.T) {
	cert, key, ca := pemFiles(t)
	bridge := []string{"IGGY_KAFKA_BRIDGE_ENABLED=true", "IGGY_KAFKA_IGGY_PASSWORD=p"}
	ssl := append([]string{"IGGY_KAFKA_TLS_CERT_FILE=" + cert, "IGGY_KAFKA_TLS_KEY_FILE=" + key}, bridge...)
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"sasl without bridge", []string{"IGGY_KAFKA_SASL_ENABLED=true"}, "need the bridge"},
		{"cert without key", []string{"IGGY_KAFKA_TLS_CERT_FILE=" + cert}, "go together"},
		{"missing cert file", []string{"IGGY_KAFKA_TLS_CERT_FILE=/nonexistent.pem", "IGGY_KAFKA_TLS_KEY_FILE=" + key}, "TLS_CERT_FILE"},
		{"tls files without tls listener", []string{"IGGY_KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:1", "IGGY_KAFKA_TLS_CERT_FILE=" + cert, "IGGY_KAFKA_TLS_KEY_FILE=" + key}, "no listener uses TLS"},
		{"client auth without ca", append([]string{"IGGY_KAFKA_TLS_CLIENT_AUTH=required"}, ssl...), "TLS_CLIENT_CA_FILE"},
		{"client auth on plaintext", []string{"IGGY_KAFKA_TLS_CLIENT_AUTH=required", "IGGY_KAFKA_TLS_CLIENT_CA_FILE=" + ca}, "needs an SSL listener"},
		{"client auth without bridge", []string{"IGGY_KAFKA_TLS_CLIENT_AUTH=required", "IGGY_KAFKA_TLS_CLIENT_CA_FILE=" + ca, "IGGY_KAFKA_TLS_CERT_FILE=" + cert, "IGGY_KAFKA_TLS_KEY_FILE=" + key}, "needs the bridge"},
		{"ca without client auth", append([]string{"IGGY_KAFKA_TLS_CLIENT_CA_FILE=" + ca}, ssl...), "only applies"},
		{"rules without client auth", append([]string{"IGGY_KAFKA_TLS_PRINCIPAL_MAPPING_RULES=DEFAULT"}, ssl...), "only applies"},
		{"bad rules", append([]string{"IGGY_KAFKA_TLS_CLIENT_AUTH=requested", "IGGY_KAFKA_TLS_CLIENT_CA_FILE=" + ca, "IGGY_KAFKA_TLS_PRINCIPAL_MAPPING_RULES=RULE:x"}, ssl...), "TLS_PRINCIPAL_MAPPING_RULES"},
		{"session lifetime without sasl", []string{"IGGY_KAFKA_SASL_SESSION_LIFETIME=1h"}, "only applies to SASL"},
		{"negative lifetime", []string{"IGGY_KAFKA_SASL_SESSION_LIFETIME=-1s"}, "SASL_SESSION_LIFETIME"},
	}
	for _, tt := range tests {
		_, err := load(t, nil, tt.env...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// A client without a certificate under TLS_CLIENT_AUTH=requested is ANONYMOUS unless the
// operator names another principal; naming the bridge account (unchecked, or as its user) is
// warned about.
func TestAnonymousPrincipal(t *testing.T) {
	cert, key, ca := pemFiles(t)
	base := []string{"IGGY_KAFKA_BRIDGE_ENABLED=true", "IGGY_KAFKA_IGGY_USERNAME=gateway", "IGGY_KAFKA_IGGY_PASSWORD=p",
		"IGGY_KAFKA_TLS_CERT_FILE=" + cert, "IGGY_KAFKA_TLS_KEY_FILE=" + key, "IGGY_KAFKA_TLS_CLIENT_CA_FILE=" + ca,
		"IGGY_KAFKA_TLS_CLIENT_AUTH=requested"}
	for _, tt := range []struct {
		set, want string
		warn      bool
	}{
		{"", AnonymousPrincipal, false},
		{"guest", "guest", false},
		{BridgePrincipal, BridgePrincipal, true},
		{"gateway", "gateway", true},
	} {
		env := base
		if tt.set != "" {
			env = append(env[:len(env):len(env)], "IGGY_KAFKA_TLS_ANONYMOUS_PRINCIPAL="+tt.set)
		}
		c, err := load(t, nil, env...)
		if err != nil {
			t.Fatalf("%q: %v", tt.set, err)
		}
		warned := strings.Contains(strings.Join(c.Warnings, "\n"), "TLS_ANONYMOUS_PRINCIPAL")
		if c.TLSAnonymousPrincipal != tt.want || warned != tt.warn {
			t.Errorf("%q: principal %q, warned %v (%q); want %q, %v", tt.set, c.TLSAnonymousPrincipal, warned, c.Warnings, tt.want, tt.warn)
		}
	}
	if _, err := load(t, nil, append(base[:len(base):len(base)], "IGGY_KAFKA_TLS_ANONYMOUS_PRINCIPAL=")...); err == nil {
		t.Error("empty principal accepted")
	}
}

// SASL sessions end after an hour by default, so a changed password or a deleted token stops
// an open connection within that bound (docs/SECURITY.md); the default needs no SASL listener,
// an explicit lifetime does.
func TestSessionLifetimeDefault(t *testing.T) {
	c, err := load(t, nil, "IGGY_KAFKA_SASL_ENABLED=true", "IGGY_KAFKA_BRIDGE_ENABLED=true", "IGGY_KAFKA_IGGY_PASSWORD=p")
	if err != nil {
		t.Fatal(err)
	}
	if c.SASLSessionLifetime != time.Hour {
		t.Errorf("default session lifetime %v, want 1h", c.SASLSessionLifetime)
	}
	if _, err := load(t, nil); err != nil {
		t.Errorf("default lifetime without a SASL listener: %v", err)
	}
	c, err = load(t, nil, "IGGY_KAFKA_SASL_ENABLED=true", "IGGY_KAFKA_BRIDGE_ENABLED=true", "IGGY_KAFKA_IGGY_PASSWORD=p", "IGGY_KAFKA_SASL_SESSION_LIFETIME=0")
	if err != nil || c.SASLSessionLifetime != 0 {
		t.Errorf("lifetime 0: %v, %v", c.SASLSessionLifetime, err)
	}
}
