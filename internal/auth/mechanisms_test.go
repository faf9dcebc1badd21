package auth

import (
	"context"
	"errors"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func TestParse(t *testing.T) {
	tests := []struct {
		mech, msg string
		want      Credentials
		ok        bool
	}{
		{MechanismPlain, "\x00alice\x00pw", Credentials{Mechanism: "PLAIN", User: "alice", Password: "pw"}, true},
		{MechanismPlain, "alice\x00alice\x00pw", Credentials{Mechanism: "PLAIN", User: "alice", Password: "pw"}, true},
		{MechanismPlain, "bob\x00alice\x00pw", Credentials{}, false}, // acting as someone else
		{MechanismPlain, "\x00alice\x00", Credentials{}, false},
		{MechanismPlain, "\x00\x00pw", Credentials{}, false},
		{MechanismPlain, "\x00alice\x00pw\x00x", Credentials{}, false},
		{MechanismOAuthBearer, "n,,\x01auth=Bearer tok123\x01\x01", Credentials{Mechanism: "OAUTHBEARER", Token: "tok123"}, true},
		{MechanismOAuthBearer, "n,a=alice,\x01host=x\x01auth=Bearer tok\x01\x01", Credentials{Mechanism: "OAUTHBEARER", Token: "tok"}, true},
		{MechanismOAuthBearer, "n,,\x01auth=Basic tok\x01\x01", Credentials{}, false},
		{MechanismOAuthBearer, "n,,\x01\x01", Credentials{}, false},
		{MechanismOAuthBearer, "p=x,,\x01auth=Bearer tok\x01\x01", Credentials{}, false},
		{MechanismOAuthBearer, "n,,\x01auth=Bearer tok", Credentials{}, false},
		{MechanismOAuthBearer, "n,,\x01auth=Bearer a\x01auth=Bearer b\x01\x01", Credentials{}, false},
		{"SCRAM-SHA-256", "x", Credentials{}, false},
	}
	for _, tt := range tests {
		got, err := Parse(tt.mech, []byte(tt.msg))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Parse(%s, %q) = %+v, %v", tt.mech, tt.msg, got, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("PLAIN", []byte("\x00alice\x00pw"))
	f.Add("OAUTHBEARER", []byte("n,,\x01auth=Bearer tok\x01\x01"))
	f.Fuzz(func(t *testing.T, mech string, msg []byte) {
		c, err := Parse(mech, msg)
		if err == nil && c.User == "" && c.Token == "" {
			t.Fatalf("accepted %q without a user or token", msg)
		}
	})
}

// fakeVerifier accepts one password and counts checks running at once.
type fakeVerifier struct {
	running, peak atomic.Int32
	hold          time.Duration
	validUntil    time.Time // of every accepted credential
}

func (v *fakeVerifier) Verify(_ context.Context, c Credentials) (Verified, error) {
	n := v.running.Add(1)
	defer v.running.Add(-1)
	for {
		p := v.peak.Load()
		if n <= p || v.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(v.hold)
	if c.Password == "unreachable" {
		return Verified{}, errors.New("iggy unreachable")
	}
	if c.Password != "right" {
		return Verified{}, ErrBadCredentials
	}
	return Verified{User: c.User, ValidUntil: v.validUntil}, nil
}

var peerA = &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 1}

func TestConcurrentChecksBounded(t *testing.T) {
	v := &fakeVerifier{hold: 20 * time.Millisecond}
	a := NewAuthenticator(Options{Verifier: v, MaxConcurrent: 2})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			peer := &net.TCPAddr{IP: net.IPv4(10, 0, 1, byte(i)), Port: 1} // distinct: no throttle
			if _, err := a.Authenticate(context.Background(), peer, MechanismPlain, []byte("\x00u\x00right"), listener.Identity{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if p := v.peak.Load(); p != 2 {
		t.Errorf("peak concurrent checks %d, want 2", p)
	}
}

func TestReauthenticationKeepsThePrincipal(t *testing.T) {
	a := NewAuthenticator(Options{Verifier: &fakeVerifier{}, SessionLifetime: time.Hour})
	id, err := a.Authenticate(context.Background(), peerA, MechanismPlain, []byte("\x00alice\x00right"), listener.Identity{User: "alice"})
	if err != nil || id.User != "alice" || id.Expires.IsZero() {
		t.Fatalf("%+v %v", id, err)
	}
	_, err = a.Authenticate(context.Background(), peerA, MechanismPlain, []byte("\x00bob\x00right"), listener.Identity{User: "alice"})
	if !errors.Is(err, ErrPrincipalChanged) {
		t.Fatalf("err = %v", err)
	}
}

// A session ends after the configured lifetime, and never after the credentials expire, even
// with the lifetime off (as a Kafka broker bounds a session by its token).
func TestSessionEndBoundedByCredentials(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	soon, later := now.Add(10*time.Second), now.Add(2*time.Hour)
	for _, tc := range []struct {
		name       string
		lifetime   time.Duration
		validUntil time.Time
		want       time.Time
	}{
		{"off, no expiry", 0, time.Time{}, time.Time{}},
		{"off, token expires", 0, soon, soon},
		{"lifetime, no expiry", time.Hour, time.Time{}, now.Add(time.Hour)},
		{"token expires before the lifetime", time.Hour, soon, soon},
		{"token expires after the lifetime", time.Hour, later, now.Add(time.Hour)},
	} {
		a := NewAuthenticator(Options{Verifier: &fakeVerifier{}, SessionLifetime: tc.lifetime})
		if got := a.sessionEnd(now, tc.validUntil); !got.Equal(tc.want) {
			t.Errorf("%s: session ends %v, want %v", tc.name, got, tc.want)
		}
	}
	// Through Authenticate: the identity carries the bound.
	a := NewAuthenticator(Options{Verifier: &fakeVerifier{validUntil: time.Now().Add(time.Minute)}, SessionLifetime: time.Hour})
	id, err := a.Authenticate(context.Background(), peerA, MechanismPlain, []byte("\x00alice\x00right"), listener.Identity{})
	if err != nil || id.Expires.IsZero() || time.Until(id.Expires) > time.Minute {
		t.Fatalf("identity %+v (%v): want a session ending within the credentials' minute", id, err)
	}
}

func TestEarliestExpiry(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	at := func(d time.Duration) uint64 { return uint64(now.Add(d).UnixMicro()) }
	for _, tc := range []struct {
		name string
		pats []iggy.PersonalAccessToken
		want time.Time
	}{
		{"no tokens", nil, time.Time{}},
		{"never expires", []iggy.PersonalAccessToken{{Name: "a"}, {Name: "b", ExpiryAt: math.MaxUint64}}, time.Time{}},
		{"earliest of the valid ones", []iggy.PersonalAccessToken{{Name: "a", ExpiryAt: at(time.Hour)}, {Name: "b"}, {Name: "c", ExpiryAt: at(time.Minute)}},
			now.Add(time.Minute)},
		{"expired tokens cannot be the one used", []iggy.PersonalAccessToken{{Name: "old", ExpiryAt: at(-time.Minute)}, {Name: "b", ExpiryAt: at(time.Hour)}},
			now.Add(time.Hour)},
	} {
		if got := earliestExpiry(tc.pats, now); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
