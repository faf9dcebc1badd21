package auth_test

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
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
	// Without a certificate the connection acts as ANONYMOUS, which has no Iggy user and so
	// no rights: it may neither create nor write a topic (as under Kafka with an authorizer).
	cl := g.kafka("SSL", kgo.DialTLSConfig(g.clientTLS(nil)))
	if err := roundTrip(t, cl, "anon-topic"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("anonymous produce: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if _, err := g.iggy.GetTopic(ctxT(t), iggy.Name("kafka"), iggy.Name("anon-topic")); err == nil {
		t.Error("an anonymous client created a topic")
	}
	// The operator can name the principal: an Iggy user's permissions, or the bridge account
	// (the behaviour before the setting).
	for _, principal := range []string{"bob", "BRIDGE"} {
		g := startSecureWithClientCA(t, "requested", "IGGY_KAFKA_TLS_ANONYMOUS_PRINCIPAL="+principal)
		cl := g.kafka("SSL", kgo.DialTLSConfig(g.clientTLS(nil)))
		if err := roundTrip(t, cl, "anon-topic"); err != nil {
			t.Fatalf("%s: %v", principal, err)
		}
	}
	// A certificate from another CA fails verification.
	other := startSecureWithClientCA(t, "requested")
	c := dialRaw(t, g.addrs["SSL"], g.clientTLS(other.clientCert("alice")))
	if !c.closedAfter(metadataRequest()) {
		t.Error("certificate from an unknown CA was accepted")
	}
}

// startSecureWithClientCA starts an SSL listener whose client CA is the gateway's own test CA.
func startSecureWithClientCA(t *testing.T, mode string, env ...string) *secureGateway {
	return startSecure(t, []string{"SSL"}, append([]string{"IGGY_KAFKA_TLS_CLIENT_AUTH=" + mode, "IGGY_KAFKA_TLS_CLIENT_CA_FILE=" + caPlaceholder,
		"IGGY_KAFKA_TLS_PRINCIPAL_MAPPING_RULES=" + cnRules}, env...)...)
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

// Client certificates are mapped from the full subject in RFC 2253 form, as Kafka maps them:
// subjects that differ from "CN=alice,OU=Tenants,O=Example" only in attributes Go's parsed
// Subject drops (DC, UID, emailAddress), in a multi-valued RDN, in a second CN or in the order
// of the RDNs are other principals, which a rule anchored on that form does not map.
func TestCertificateSubjectIsFullRFC2253(t *testing.T) {
	g := startSecure(t, []string{"SSL"}, "IGGY_KAFKA_TLS_CLIENT_AUTH=required", "IGGY_KAFKA_TLS_CLIENT_CA_FILE="+caPlaceholder,
		"IGGY_KAFKA_TLS_PRINCIPAL_MAPPING_RULES=RULE:^CN=([^,+]*),OU=Tenants,O=Example$/$1/L")
	attr := func(oid asn1.ObjectIdentifier, v string) pkix.AttributeTypeAndValue {
		return pkix.AttributeTypeAndValue{Type: oid, Value: v}
	}
	var (
		cn    = attr(asn1.ObjectIdentifier{2, 5, 4, 3}, "alice")
		ou    = attr(asn1.ObjectIdentifier{2, 5, 4, 11}, "Tenants")
		o     = attr(asn1.ObjectIdentifier{2, 5, 4, 10}, "Example")
		dc    = attr(asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, "example")
		uid   = attr(asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}, "a1")
		email = attr(asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}, "alice@example.com")
		other = attr(asn1.ObjectIdentifier{2, 5, 4, 3}, "mallory")
	)
	rdns := func(rs ...[]pkix.AttributeTypeAndValue) []byte {
		der, err := asn1.Marshal(pkix.RDNSequence(func() []pkix.RelativeDistinguishedNameSET {
			out := make([]pkix.RelativeDistinguishedNameSET, len(rs))
			for i, r := range rs {
				out[i] = r
			}
			return out
		}()))
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	s := func(a pkix.AttributeTypeAndValue) []pkix.AttributeTypeAndValue {
		return []pkix.AttributeTypeAndValue{a}
	}
	cases := []struct {
		name    string
		subject []byte
		served  bool
		logged  string // the subject as logged
	}{
		{"exact", rdns(s(o), s(ou), s(cn)), true, "CN=alice,OU=Tenants,O=Example"},
		{"domain component", rdns(s(dc), s(o), s(ou), s(cn)), false, "CN=alice,OU=Tenants,O=Example,DC=example"},
		{"uid", rdns(s(o), s(ou), s(cn), s(uid)), false, "UID=a1,CN=alice,OU=Tenants,O=Example"},
		{"email", rdns(s(o), s(ou), s(cn), s(email)), false, "1.2.840.113549.1.9.1=#"},
		{"multi-valued", rdns(s(o), s(ou), []pkix.AttributeTypeAndValue{cn, uid}), false, "CN=alice+UID=a1,OU=Tenants,O=Example"},
		{"second common name", rdns(s(o), s(ou), s(other), s(cn)), false, "CN=alice,CN=mallory,OU=Tenants,O=Example"},
		{"reordered", rdns(s(cn), s(ou), s(o)), false, "O=Example,OU=Tenants,CN=alice"},
	}
	for i, c := range cases {
		cert := g.ca.ClientRawSubject(t, "subject"+strconv.Itoa(i), c.subject)
		conn := dialRaw(t, g.addrs["SSL"], g.clientTLS(cert))
		if served := !conn.closedAfter(metadataRequest()); served != c.served {
			t.Errorf("%s: served %v, want %v", c.name, served, c.served)
		}
		if !strings.Contains(g.log.String(), `subject="`+c.logged) {
			t.Errorf("%s: subject %q not logged:\n%s", c.name, c.logged, g.log)
		}
	}
}
