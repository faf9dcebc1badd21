package auth_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

func TestSASLPlainProduceConsume(t *testing.T) {
	g := startSecure(t, []string{"SASL_PLAINTEXT", "SASL_SSL"})
	if err := roundTrip(t, g.kafka("SASL_PLAINTEXT", plainAuth("alice", "alice-secret")), "plain-topic"); err != nil {
		t.Fatalf("SASL_PLAINTEXT: %v", err)
	}
	cl := g.kafka("SASL_SSL", plainAuth("bob", "bob-secret"), kgo.DialTLSConfig(g.clientTLS(nil)))
	if err := roundTrip(t, cl, "ssl-topic"); err != nil {
		t.Fatalf("SASL_SSL: %v", err)
	}
	if !strings.Contains(g.log.String(), "SASL authentication succeeded") || !strings.Contains(g.log.String(), "user=bob") {
		t.Errorf("no success log line:\n%s", g.log)
	}
}

func TestSASLWrongCredentials(t *testing.T) {
	g := startSecure(t, []string{"SASL_PLAINTEXT"})
	for _, creds := range [][2]string{{"alice", "wrong"}, {"nobody", "alice-secret"}} {
		cl := g.kafka("SASL_PLAINTEXT", plainAuth(creds[0], creds[1]))
		err := cl.Ping(ctxT(t))
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s: err = %v, want SASL_AUTHENTICATION_FAILED", creds[0], err)
		}
	}
	// Unknown user and wrong password get the same message.
	c := dialRaw(t, g.addrs["SASL_PLAINTEXT"], nil)
	resp := c.authenticate("nobody", "x")
	if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || strings.Contains(*resp.ErrorMessage, "nobody") {
		t.Errorf("unknown user: %d %v", resp.ErrorCode, resp.ErrorMessage)
	}
	if c.frame() != nil {
		t.Error("connection still open after a failed authentication")
	}
}

func TestOAuthBearerWithPersonalAccessToken(t *testing.T) {
	g := startSecure(t, []string{"SASL_PLAINTEXT"})
	ctx := ctxT(t)
	alice, err := iggy.DialConn(ctx, iggy.Config{Addr: g.ms.Addr(), Username: "alice", Password: "alice-secret"})
	if err != nil {
		t.Fatal(err)
	}
	token, err := alice.CreatePAT(ctx, "kafka", 0)
	alice.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(t, g.kafka("SASL_PLAINTEXT", bearerAuth(token)), "pat-topic"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g.log.String(), "mechanism=OAUTHBEARER user=alice") {
		t.Errorf("the token's user was not identified:\n%s", g.log)
	}
	err = g.kafka("SASL_PLAINTEXT", bearerAuth("not-a-token")).Ping(ctx)
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("bad token: err = %v", err)
	}
}

func TestRequestsBeforeAuthenticationClose(t *testing.T) {
	g := startSecure(t, []string{"SASL_PLAINTEXT"})
	addr := g.addrs["SASL_PLAINTEXT"]

	// ApiVersions is served, and advertises the SASL keys.
	c := dialRaw(t, addr, nil)
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "raw", "1"
	var sasl int
	for _, k := range c.roundTrip(av).(*kmsg.ApiVersionsResponse).ApiKeys {
		if k.ApiKey == kmsg.SASLHandshake.Int16() || k.ApiKey == kmsg.SASLAuthenticate.Int16() {
			sasl++
		}
	}
	if sasl != 2 {
		t.Errorf("%d SASL keys advertised, want 2", sasl)
	}
	// Anything else closes the connection.
	if !c.closedAfter(metadataRequest()) {
		t.Error("Metadata before authentication was answered")
	}
	// So does SaslAuthenticate without a handshake.
	c = dialRaw(t, addr, nil)
	a := kmsg.NewPtrSASLAuthenticateRequest()
	a.SASLAuthBytes = []byte("\x00alice\x00alice-secret")
	c.send(a, 1)
	if f := c.frame(); f == nil || c.frame() != nil {
		t.Error("SaslAuthenticate without handshake: want an ILLEGAL_SASL_STATE answer, then close")
	}
	// An unknown mechanism is answered with the list, then the connection closes.
	c = dialRaw(t, addr, nil)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "SCRAM-SHA-256"
	resp := c.roundTrip(hs).(*kmsg.SASLHandshakeResponse)
	if resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(resp.SupportedMechanisms, ",") != "PLAIN,OAUTHBEARER" {
		t.Errorf("unknown mechanism: %+v", resp)
	}
	if c.frame() != nil {
		t.Error("connection open after an unknown mechanism")
	}
	// A frame above the pre-authentication limit closes the connection before it is read.
	c = dialRaw(t, addr, nil)
	if _, err := c.nc.Write([]byte{0, 0x10, 0, 0}); err != nil { // 1 MiB > 512 KiB
		t.Fatal(err)
	}
	if c.frame() != nil {
		t.Error("oversized pre-authentication frame was accepted")
	}
	// Once authenticated, the same requests are served.
	c = dialRaw(t, addr, nil)
	if r := c.authenticate("alice", "alice-secret"); r.ErrorCode != 0 {
		t.Fatalf("authenticate: %d", r.ErrorCode)
	}
	c.roundTrip(metadataRequest())
}

func TestReauthenticationAsAnotherUserRefused(t *testing.T) {
	g := startSecure(t, []string{"SASL_PLAINTEXT"}, "IGGY_KAFKA_SASL_SESSION_LIFETIME=1h")
	c := dialRaw(t, g.addrs["SASL_PLAINTEXT"], nil)
	r := c.authenticate("alice", "alice-secret")
	if r.ErrorCode != 0 || r.SessionLifetimeMillis <= 0 || r.SessionLifetimeMillis > time.Hour.Milliseconds() {
		t.Fatalf("authenticate: error %d, lifetime %d", r.ErrorCode, r.SessionLifetimeMillis)
	}
	if r := c.authenticate("alice", "alice-secret"); r.ErrorCode != 0 { // same user: fine
		t.Fatalf("re-authenticate as alice: %d", r.ErrorCode)
	}
	c.roundTrip(metadataRequest())
	r = c.authenticate("bob", "bob-secret")
	if r.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("re-authenticate as bob: error %d", r.ErrorCode)
	}
	if c.frame() != nil {
		t.Error("connection open after re-authentication as another user")
	}
}

func TestSessionExpiry(t *testing.T) {
	const lifetime = 300 * time.Millisecond
	g := startSecure(t, []string{"SASL_PLAINTEXT"}, "IGGY_KAFKA_SASL_SESSION_LIFETIME="+lifetime.String())
	c := dialRaw(t, g.addrs["SASL_PLAINTEXT"], nil)
	start := time.Now()
	if r := c.authenticate("alice", "alice-secret"); r.ErrorCode != 0 || r.SessionLifetimeMillis <= 0 {
		t.Fatalf("authenticate: %d %d", r.ErrorCode, r.SessionLifetimeMillis)
	}
	time.Sleep(lifetime - time.Since(start) + 50*time.Millisecond) // let the session end
	if !c.closedAfter(metadataRequest()) {
		t.Error("request after the session expired was answered")
	}

	// franz-go re-authenticates before its sessions end (KIP-368) and keeps working.
	cl := g.kafka("SASL_PLAINTEXT", plainAuth("alice", "alice-secret"))
	ctx := ctxT(t)
	for i := range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "reauth", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		time.Sleep(lifetime)
	}
	if n := strings.Count(g.log.String(), "reauthentication=true"); n == 0 {
		t.Errorf("franz-go never re-authenticated:\n%s", g.log)
	}
}

// A burst of wrong passwords from one address is slowed down, for every account tried from it,
// and no attempt waits longer than READ_TIMEOUT: with READ_TIMEOUT=1.5s, the attempts after
// three failures (wait 500 ms, 1 s, then 2 s) are closed unchecked at once, even with the right
// password of another account. (The waits themselves are checked on a fake clock in
// TestThrottle; here only outcomes, each with at least half a second of margin.)
func TestFailedLoginsThrottleThePeer(t *testing.T) {
	g := startSecure(t, []string{"SASL_PLAINTEXT"}, "IGGY_KAFKA_READ_TIMEOUT=1500ms")
	for i := range 3 {
		c := dialRaw(t, g.addrs["SASL_PLAINTEXT"], nil)
		if r := c.authenticate("alice", "guess"); r.ErrorCode != kerr.SaslAuthenticationFailed.Code {
			t.Fatalf("attempt %d: error %d", i+1, r.ErrorCode)
		}
	}
	c := dialRaw(t, g.addrs["SASL_PLAINTEXT"], nil)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	c.roundTrip(hs)
	a := kmsg.NewPtrSASLAuthenticateRequest()
	a.Version, a.SASLAuthBytes = 2, []byte("\x00bob\x00bob-secret")
	start := time.Now()
	if !c.closedAfter(a) {
		t.Error("bob's login from the guessing address was answered within the 2 s wait")
	}
	if took := time.Since(start); took >= 1500*time.Millisecond {
		t.Errorf("the throttled attempt was closed after %v: it waited instead of being refused at once", took)
	}
	if !strings.Contains(g.log.String(), "would exceed the read timeout") {
		t.Errorf("no log line for the throttled attempt:\n%s", g.log)
	}
}

// An OAUTHBEARER session never outlives its personal access token: the lifetime told to the
// client is capped by the token's expiry, and once the token has expired, the connection stops
// serving the client although SASL_SESSION_LIFETIME is an hour.
func TestOAuthBearerSessionEndsWithTheToken(t *testing.T) {
	const tokenLife = 2 * time.Second
	g := startSecure(t, []string{"SASL_PLAINTEXT"}, "IGGY_KAFKA_SASL_SESSION_LIFETIME=1h")
	ctx := ctxT(t)
	alice, err := iggy.DialConn(ctx, iggy.Config{Addr: g.ms.Addr(), Username: "alice", Password: "alice-secret"})
	if err != nil {
		t.Fatal(err)
	}
	token, err := alice.CreatePAT(ctx, "short", uint64(tokenLife.Microseconds()))
	alice.Close()
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	c := dialRaw(t, g.addrs["SASL_PLAINTEXT"], nil)
	r := c.authenticateBearer(token)
	if r.ErrorCode != 0 || r.SessionLifetimeMillis <= 0 || r.SessionLifetimeMillis > tokenLife.Milliseconds() {
		t.Fatalf("authenticate: error %d, session lifetime %d ms; want at most the token's %v", r.ErrorCode, r.SessionLifetimeMillis, tokenLife)
	}
	cl := g.kafka("SASL_PLAINTEXT", bearerAuth(token))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "pat-expiry", Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatalf("produce while the token is valid: %v", err)
	}
	time.Sleep(tokenLife - time.Since(created) + 100*time.Millisecond)
	if !c.closedAfter(metadataRequest()) {
		t.Error("a request after the token expired was answered")
	}
	err = cl.ProduceSync(ctx, &kgo.Record{Topic: "pat-expiry", Value: []byte("after")}).FirstErr()
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("produce after the token expired: err = %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

// Attempts of connections closed before they were checked are dropped: they neither run nor
// lengthen the wait, so eight guesses abandoned at once do not hold back a correct login from
// the same address (the penetration test saw 90 s).
func TestClosedConnectionsDoNotExtendTheThrottle(t *testing.T) {
	g := startSecure(t, []string{"SASL_PLAINTEXT"})
	c := dialRaw(t, g.addrs["SASL_PLAINTEXT"], nil)
	if r := c.authenticate("alice", "guess"); r.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("error %d", r.ErrorCode)
	}
	for range 8 {
		c := dialRaw(t, g.addrs["SASL_PLAINTEXT"], nil)
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 1, "PLAIN"
		c.roundTrip(hs)
		a := kmsg.NewPtrSASLAuthenticateRequest()
		a.Version, a.SASLAuthBytes = 2, []byte("\x00alice\x00guess")
		c.send(a, 2) // waits 500 ms for the throttle; the client does not
		c.nc.Close()
	}
	start := time.Now()
	c = dialRaw(t, g.addrs["SASL_PLAINTEXT"], nil)
	if r := c.authenticate("alice", "alice-secret"); r.ErrorCode != 0 {
		t.Fatalf("correct login: error %d", r.ErrorCode)
	}
	// Eight more failures would have made it wait 0.5+1+2+4+8+16+30+30 s.
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the correct login took %v", took)
	}
	if n := strings.Count(g.log.String(), "SASL authentication failed"); n != 1 {
		t.Errorf("%d failed attempts logged, want the 1 checked", n)
	}
}
