package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// ErrBadCredentials is a SASL attempt Iggy rejected, or one that was malformed; the client
// gets SASL_AUTHENTICATION_FAILED with a generic message and the connection closes.
var ErrBadCredentials = errors.New("authentication failed: invalid credentials")

// ErrPrincipalChanged is a re-authentication (KIP-368) as another user than the connection's.
var ErrPrincipalChanged = errors.New("re-authentication as a different principal is not allowed")

// ErrUnavailable means the credentials could not be checked (Iggy unreachable, too many checks
// waiting): the connection closes without an answer, because clients treat
// SASL_AUTHENTICATION_FAILED as fatal while a dropped connection is retried.
var ErrUnavailable = errors.New("credentials could not be checked")

// Verifier checks credentials against Iggy.
type Verifier interface {
	// Verify returns whom the credentials belong to, ErrBadCredentials when Iggy rejected
	// them, or another error when Iggy could not be asked.
	Verify(ctx context.Context, c Credentials) (Verified, error)
}

// Verified is the outcome of an accepted check.
type Verified struct {
	// User is the Iggy user name; UserID and UserCreatedAt identify it (Iggy reuses ids).
	User          string
	UserID        uint32
	UserCreatedAt uint64
	// ValidUntil, when not zero, is when the credentials stop being valid (a personal access
	// token's expiry): no SASL session may last beyond it.
	ValidUntil time.Time
}

// Options configure an Authenticator.
type Options struct {
	Verifier Verifier
	// MaxConcurrent bounds the checks running at once, gateway-wide.
	MaxConcurrent int
	// SessionLifetime, when positive, makes SASL sessions expire (KIP-368): clients must
	// re-authenticate, as the same user, before it ends.
	SessionLifetime time.Duration
	// Timeout bounds an attempt: the throttle's wait, the wait for a check slot and the check
	// itself (READ_TIMEOUT); default 15 s.
	Timeout time.Duration
	// FailureDelay is the wait imposed on an address, and on the address and user name, after
	// a first failure, doubling with each further one up to MaxFailureDelay; defaults 500 ms
	// and 30 s (throttle).
	FailureDelay, MaxFailureDelay time.Duration
	Logger                        *slog.Logger
}

// Authenticator verifies SASL attempts. It is safe for concurrent use.
type Authenticator struct {
	opts     Options
	log      *slog.Logger
	slots    chan struct{}
	throttle *throttle
}

// NewAuthenticator returns an Authenticator.
func NewAuthenticator(opts Options) *Authenticator {
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 4
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 15 * time.Second
	}
	if opts.FailureDelay <= 0 {
		opts.FailureDelay = 500 * time.Millisecond
	}
	if opts.MaxFailureDelay < opts.FailureDelay {
		opts.MaxFailureDelay = max(30*time.Second, opts.FailureDelay)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Authenticator{
		opts: opts, log: opts.Logger,
		slots:    make(chan struct{}, opts.MaxConcurrent),
		throttle: newThrottle(opts.FailureDelay, opts.MaxFailureDelay),
	}
}

// SessionLifetime is the lifetime of new sessions, 0 when they do not expire.
func (a *Authenticator) SessionLifetime() time.Duration { return a.opts.SessionLifetime }

// Authenticate checks msg, the SaslAuthenticate bytes for mechanism, from a client at peer
// whose connection currently has identity current (re-authentication when it names a user).
// It returns the connection's new identity, or ErrBadCredentials, ErrPrincipalChanged or an
// error wrapping ErrUnavailable. The caller should clear msg afterwards: nothing here keeps it.
// Timeout bounds the whole attempt, the throttle's wait included; ctx ends when the client
// goes away, and an attempt cut short that way counts neither as a failure nor a success.
func (a *Authenticator) Authenticate(ctx context.Context, peer net.Addr, mechanism string, msg []byte, current listener.Identity) (listener.Identity, error) {
	host := peerHost(peer)
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	creds, parseErr := Parse(mechanism, msg)
	// Tokens name no user before they are checked: they share the address's "" entry, as do
	// names too long to be an Iggy user (they are refused unchecked; the key stays small).
	user := creds.User
	if len(user) > wire.MaxNameLength {
		user = ""
	}
	release, err := a.throttle.acquire(ctx, host, user)
	if err != nil {
		a.log.Warn("SASL attempt not checked: throttled", "remote", host, "mechanism", mechanism, "err", err)
		return listener.Identity{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var id listener.Identity
	if parseErr != nil {
		err = ErrBadCredentials
	} else {
		id, err = a.check(ctx, mechanism, creds, current)
	}
	switch {
	case errors.Is(err, ErrBadCredentials) || errors.Is(err, ErrPrincipalChanged):
		release(failed)
	case err == nil:
		release(succeeded)
	default:
		release(abandoned)
	}
	switch {
	case err == nil:
		a.log.Info("SASL authentication succeeded", "remote", host, "mechanism", mechanism, "user", id.User, "reauthentication", current.Authenticated())
	case errors.Is(err, ErrUnavailable):
		a.log.Warn("SASL credentials could not be checked", "remote", host, "mechanism", mechanism, "err", err)
	default:
		a.log.Warn("SASL authentication failed", "remote", host, "mechanism", mechanism, "err", err)
	}
	return id, err
}

func (a *Authenticator) check(ctx context.Context, mechanism string, creds Credentials, current listener.Identity) (listener.Identity, error) {
	select {
	case a.slots <- struct{}{}:
	case <-ctx.Done():
		return listener.Identity{}, fmt.Errorf("%w: no check slot free: %v", ErrUnavailable, ctx.Err())
	}
	v, err := a.opts.Verifier.Verify(ctx, creds)
	<-a.slots
	switch {
	case errors.Is(err, ErrBadCredentials):
		return listener.Identity{}, err
	case err != nil:
		return listener.Identity{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	case current.Authenticated() && current.User != v.User:
		return listener.Identity{}, ErrPrincipalChanged
	}
	return listener.Identity{User: v.User, UserID: v.UserID, UserCreatedAt: v.UserCreatedAt, Mechanism: mechanism, Expires: a.sessionEnd(time.Now(), v.ValidUntil)}, nil
}

// sessionEnd is when a session authenticated at now ends (zero: never): after
// SessionLifetime, and never after the credentials expire, as a Kafka broker bounds a session
// by its token's lifetime whether or not re-authentication is configured (docs/SECURITY.md).
func (a *Authenticator) sessionEnd(now, validUntil time.Time) time.Time {
	end := validUntil
	if a.opts.SessionLifetime > 0 {
		if byLifetime := now.Add(a.opts.SessionLifetime); end.IsZero() || byLifetime.Before(end) {
			end = byLifetime
		}
	}
	return end
}

// peerHost is the address failures are counted against: the IP without the port.
func peerHost(peer net.Addr) string {
	if peer == nil {
		return ""
	}
	if host, _, err := net.SplitHostPort(peer.String()); err == nil {
		return host
	}
	return peer.String()
}
