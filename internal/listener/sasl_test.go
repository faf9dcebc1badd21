package listener

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// saslRoutes serves ApiVersions, SaslHandshake, Metadata, and a SaslAuthenticate that accepts
// the password "right" (as user "alice", with the session ending at expires) and refuses any
// other, after hold. started receives the context of each SaslAuthenticate as it begins.
func saslRoutes(hold time.Duration, expires func() time.Time, started chan<- context.Context) routes {
	answer := func(_ context.Context, _ *ConnContext, req kmsg.Request) (kmsg.Response, error) {
		return req.ResponseKind(), nil
	}
	return routes{
		apiVersionsKey:       {0, 3, Handler{Serve: answer}},
		saslHandshakeKey:     {1, 1, Handler{Serve: answer}},
		int16(kmsg.Metadata): {0, 12, Handler{Serve: answer}},
		saslAuthenticateKey: {0, 2, Handler{Serve: func(ctx context.Context, cc *ConnContext, req kmsg.Request) (kmsg.Response, error) {
			if started != nil {
				started <- ctx
			}
			select {
			case <-time.After(hold):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
			if string(req.(*kmsg.SASLAuthenticateRequest).SASLAuthBytes) != "right" {
				resp.ErrorCode = 58
				return resp, context.Canceled // close after the answer
			}
			cc.SetIdentity(Identity{User: "alice", Mechanism: "PLAIN", Expires: expires()})
			return resp, nil
		}}},
	}
}

func saslServer(t *testing.T, d Dispatcher, readTimeout time.Duration) *testServer {
	return startServer(t, d, func(c *Config) {
		c.Name, c.SASL, c.PreAuthMaxFrameSize, c.ReadTimeout = "SASL_PLAINTEXT", true, 64<<10, readTimeout
	})
}

func apiVersions() kmsg.Request {
	r := kmsg.NewPtrApiVersionsRequest()
	r.Version = 3
	return r
}

func handshake() kmsg.Request {
	r := kmsg.NewPtrSASLHandshakeRequest()
	r.Version, r.Mechanism = 1, "PLAIN"
	return r
}

func authenticate(password string) kmsg.Request {
	r := kmsg.NewPtrSASLAuthenticateRequest()
	r.Version, r.SASLAuthBytes = 1, []byte(password)
	return r
}

func metadata() kmsg.Request {
	r := kmsg.NewPtrMetadataRequest()
	r.Version = 9
	return r
}

// Before authenticating, a connection of a SASL listener may send what one authentication
// takes, in Kafka's order, and nothing more: repeating ApiVersions (beyond the one retry a
// version downgrade needs), the handshake or SaslAuthenticate closes it, so a client cannot
// keep an unauthenticated connection open by repeating them.
func TestPreAuthenticationRequestsBounded(t *testing.T) {
	never := func() time.Time { return time.Time{} }
	s := saslServer(t, saslRoutes(0, never, nil), 5*time.Second)
	cases := []struct {
		name     string
		requests []kmsg.Request
		answered int // then closed, unless all are answered
		open     bool
	}{
		{"full sequence", []kmsg.Request{apiVersions(), handshake(), authenticate("right"), metadata()}, 4, true},
		{"without ApiVersions", []kmsg.Request{handshake(), authenticate("right"), metadata()}, 3, true},
		{"one ApiVersions retry", []kmsg.Request{apiVersions(), apiVersions(), handshake(), authenticate("right")}, 4, true},
		{"third ApiVersions", []kmsg.Request{apiVersions(), apiVersions(), apiVersions()}, 2, false},
		{"ApiVersions after the handshake", []kmsg.Request{handshake(), apiVersions()}, 1, false},
		{"second handshake", []kmsg.Request{apiVersions(), handshake(), handshake()}, 2, false},
		{"Metadata first", []kmsg.Request{metadata()}, 0, false},
		{"failed authentication", []kmsg.Request{handshake(), authenticate("wrong"), handshake()}, 2, false},
	}
	for _, tc := range cases {
		c := dial(t, s.addr)
		for i, r := range tc.requests {
			c.send(r, int32(i))
		}
		for i := range tc.answered {
			if c.readFrame() == nil {
				t.Fatalf("%s: closed after %d answers, want %d", tc.name, i, tc.answered)
			}
		}
		if !tc.open {
			c.expectClosed()
		}
	}
	// After a session ends, the connection may authenticate once more, and no more.
	ending := func() time.Time { return time.Now().Add(100 * time.Millisecond) }
	s = saslServer(t, saslRoutes(0, ending, nil), 5*time.Second)
	c := dial(t, s.addr)
	for i, r := range []kmsg.Request{handshake(), authenticate("right")} {
		c.send(r, int32(i))
		c.readFrame()
	}
	time.Sleep(150 * time.Millisecond)
	for i, r := range []kmsg.Request{handshake(), authenticate("right"), metadata()} {
		c.send(r, int32(i))
		if c.readFrame() == nil {
			t.Fatalf("re-authentication after expiry: closed at request %d", i)
		}
	}
	time.Sleep(150 * time.Millisecond)
	c.send(apiVersions(), 1)
	c.send(apiVersions(), 2)
	c.send(apiVersions(), 3)
	c.readFrame()
	c.readFrame()
	c.expectClosed()
}

// An unauthenticated connection is closed ReadTimeout after it opened, however it spaces its
// requests.
func TestPreAuthenticationTimeBounded(t *testing.T) {
	const readTimeout = 400 * time.Millisecond
	s := saslServer(t, saslRoutes(0, func() time.Time { return time.Time{} }, nil), readTimeout)
	c := dial(t, s.addr)
	opened := time.Now()
	time.Sleep(readTimeout / 2)
	c.send(apiVersions(), 1)
	if c.readFrame() == nil {
		t.Fatal("ApiVersions not answered")
	}
	time.Sleep(readTimeout / 4)
	c.send(handshake(), 2)
	if c.readFrame() == nil {
		t.Fatal("SaslHandshake not answered")
	}
	c.expectClosed() // no SaslAuthenticate: closed at the deadline
	if took := time.Since(opened); took > readTimeout+300*time.Millisecond {
		t.Errorf("closed after %v, want about %v", took, readTimeout)
	}
	waitFor(t, func() bool { return strings.Contains(s.logs.String(), preAuthTimeoutReason) })

	// An authenticated connection is not held to it.
	c = dial(t, s.addr)
	c.send(handshake(), 1)
	c.send(authenticate("right"), 2)
	c.readFrame()
	c.readFrame()
	time.Sleep(readTimeout + 100*time.Millisecond)
	c.send(metadata(), 3)
	if c.readFrame() == nil {
		t.Fatal("authenticated connection closed by the pre-authentication deadline")
	}
}

// A SaslAuthenticate still running when its client goes away is cancelled: nobody waits for
// its answer, and the attempt must not go on (or count against the address) on its behalf.
func TestPreAuthenticationAbandonedOnClose(t *testing.T) {
	started := make(chan context.Context, 1)
	s := saslServer(t, saslRoutes(time.Minute, func() time.Time { return time.Time{} }, started), 5*time.Second)
	c := dial(t, s.addr)
	c.send(handshake(), 1)
	c.readFrame()
	c.send(authenticate("right"), 2)
	ctx := <-started
	c.nc.Close()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the attempt of a closed connection was not cancelled")
	}
}
