package auth_test

import (
	"crypto/tls"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

const cnRules = "RULE:^CN=([^,]*),.*$/$1/L"

func TestSSLClientCertificates(t *testing.T) {
	g := startSecureWithClientCA(t, "required")
	addr := g.addrs["SSL"]

	// A certificate whose subject maps to an existing Iggy user works end to end.
	cl := g.kafka("SSL", kgo.DialTLSConfig(g.clientTLS(g.clientCert("Alice"))))
	if err := roundTrip(t, cl, "mtls-topic"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g.log.String(), "client certificate accepted") || !strings.Contains(g.log.String(), "user=alice") {
		t.Errorf("no identity log line:\n%s", g.log)
	}

	// A certificate mapping to a user Iggy does not know: closed, and the log names the user.
	c := dialRaw(t, addr, g.clientTLS(g.clientCert("Mallory")))
	if !c.closedAfter(metadataRequest()) {
		t.Error("unknown mapped user was served")
	}
	if !strings.Contains(g.log.String(), "mapped_user=mallory") {
		t.Errorf("refusal does not name the mapped user:\n%s", g.log)
	}

	// No certificate: the handshake fails under "required".
	c = dialRaw(t, addr, g.clientTLS(nil))
	if !c.closedAfter(metadataRequest()) {
		t.Error("client without certificate was served")
	}
}

func TestSSLClientCertificateRequested(t *testing.T) {
	g := startSecureWithClientCA(t, "requested")
	// Without a certificate the connection has no identity and acts as the bridge account.
	cl := g.kafka("SSL", kgo.DialTLSConfig(g.clientTLS(nil)))
	if err := roundTrip(t, cl, "anon-topic"); err != nil {
		t.Fatal(err)
	}
	// A certificate from another CA fails verification.
	other := startSecureWithClientCA(t, "requested")
	c := dialRaw(t, g.addrs["SSL"], g.clientTLS(other.clientCert("alice")))
	if !c.closedAfter(metadataRequest()) {
		t.Error("certificate from an unknown CA was accepted")
	}
}

// startSecureWithClientCA starts an SSL listener whose client CA is the gateway's own test CA.
func startSecureWithClientCA(t *testing.T, mode string) *secureGateway {
	return startSecure(t, []string{"SSL"}, "IGGY_KAFKA_TLS_CLIENT_AUTH="+mode, "IGGY_KAFKA_TLS_CLIENT_CA_FILE="+caPlaceholder,
		"IGGY_KAFKA_TLS_PRINCIPAL_MAPPING_RULES="+cnRules)
}

// Garbage instead of a TLS handshake closes the connection; nothing is left running.
func TestGarbageInsteadOfTLSHandshake(t *testing.T) {
	before := goleak.IgnoreCurrent() // runs last, after the gateway's cleanups
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	g := startSecure(t, []string{"SSL", "SASL_SSL"})
	running := goleak.IgnoreCurrent() // the gateway's own goroutines
	for _, name := range []string{"SSL", "SASL_SSL"} {
		c := dialRaw(t, g.addrs[name], nil)
		c.send(metadataRequest(), 1) // a plaintext Kafka request where a ClientHello belongs
		if c.frame() != nil {
			t.Errorf("%s: plaintext request answered", name)
		}
		c = dialRaw(t, g.addrs[name], nil)
		c.nc.Write([]byte("\x16\x03\x01\x00\x05garbage-garbage-garbage"))
		if c.frame() != nil {
			t.Errorf("%s: garbage answered", name)
		}
	}
	// While the gateway keeps running, nothing of those connections stays behind.
	if err := goleak.Find(running); err != nil {
		t.Errorf("goroutines left by refused handshakes: %v", err)
	}
}

// TLS 1.1 and older are refused.
func TestOldTLSVersionsRefused(t *testing.T) {
	g := startSecure(t, []string{"SSL"})
	cfg := g.clientTLS(nil)
	cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	nc, err := tls.Dial("tcp", g.addrs["SSL"], cfg)
	if err == nil {
		nc.Close()
		t.Fatal("TLS 1.1 handshake succeeded")
	}
}

// Metadata and FindCoordinator answer with the advertised address of the listener the request
// arrived on.
func TestAdvertisedAddressPerListener(t *testing.T) {
	g := startSecure(t, []string{"PLAINTEXT", "SASL_PLAINTEXT"})
	for name, opts := range map[string][]kgo.Opt{
		"PLAINTEXT":      nil,
		"SASL_PLAINTEXT": {plainAuth("alice", "alice-secret")},
	} {
		cl := g.kafka(name, opts...)
		_, port, _ := net.SplitHostPort(g.addrs[name])
		md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctxT(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(md.Brokers) != 1 || strconv.Itoa(int(md.Brokers[0].Port)) != port || md.Brokers[0].Host != "127.0.0.1" {
			t.Errorf("%s: Metadata brokers %+v, want 127.0.0.1:%s", name, md.Brokers, port)
		}
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey, fc.CoordinatorKeys = "alice.group", []string{"alice.group"} // a group alice may describe
		resp, err := fc.RequestWith(ctxT(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		got := resp.Port
		if len(resp.Coordinators) == 1 {
			got = resp.Coordinators[0].Port
		}
		if strconv.Itoa(int(got)) != port {
			t.Errorf("%s: FindCoordinator port %d, want %s", name, got, port)
		}
	}
}

// The bridge and the SASL checks reach an Iggy server that only speaks TLS, with
// IGGY_TLS_ENABLED, IGGY_TLS_DOMAIN and IGGY_TLS_CA_FILE.
func TestBridgeOverTLS(t *testing.T) {
	g := startSecureIggy(t, true, []string{"SASL_PLAINTEXT"})
	if err := roundTrip(t, g.kafka("SASL_PLAINTEXT", plainAuth("alice", "alice-secret")), "bridge-tls"); err != nil {
		t.Fatal(err)
	}
	// Plaintext to the TLS-only Iggy fails: the test really crossed TLS.
	ctx := ctxT(t)
	if cn, err := iggy.DialConn(ctx, iggy.Config{Addr: g.ms.Addr(), Username: "iggy", Password: "iggy", DialTimeout: 2 * time.Second}); err == nil {
		cn.Close()
		t.Fatal("plaintext login to the TLS Iggy server succeeded")
	}
}
