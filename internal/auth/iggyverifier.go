package auth

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// IggyVerifier checks credentials by logging in to Iggy on a fresh connection of its own,
// closed right after: Iggy does the comparison (Argon2, in constant time), and nothing is
// cached, so a changed password or a revoked token takes effect at the next attempt.
type IggyVerifier struct {
	// Base holds the address and TLS settings of Iggy; its credentials are ignored.
	Base iggy.Config
}

// Verify implements Verifier.
func (v IggyVerifier) Verify(ctx context.Context, c Credentials) (Verified, error) {
	cfg := v.Base
	cfg.Username, cfg.Password, cfg.Token = c.User, c.Password, c.Token
	cfg.PoolSize, cfg.PingInterval = 1, -1
	if !wellFormed(c) {
		return Verified{}, ErrBadCredentials // Iggy would refuse it; the client library would not even send it
	}
	cn, err := iggy.DialConn(ctx, cfg)
	if err != nil {
		if code, ok := iggy.CodeOf(err); ok && isRejection(code) {
			return Verified{}, ErrBadCredentials
		}
		return Verified{}, err
	}
	defer cn.Close()
	// The session's own user (users may read themselves): a token names its user only on the
	// Iggy side, and the id and creation time tell this user from a later one of the same name.
	u, err := cn.GetUser(ctx, iggy.ID(cn.UserID()))
	if err != nil {
		return Verified{}, fmt.Errorf("reading the user who logged in: %w", err)
	}
	if c.Token == "" {
		return Verified{User: u.Username, UserID: u.ID, UserCreatedAt: u.CreatedAt}, nil
	}
	pats, err := cn.GetPATs(ctx)
	if err != nil {
		return Verified{}, fmt.Errorf("reading the expiry of a personal access token: %w", err)
	}
	return Verified{User: u.Username, UserID: u.ID, UserCreatedAt: u.CreatedAt, ValidUntil: earliestExpiry(pats, time.Now())}, nil
}

// earliestExpiry bounds the expiry of the token just used from the user's list of tokens (zero:
// none expires). Iggy lists names and expiries, not which token a session logged in with, so
// the bound is the earliest expiry among the tokens still valid at now: the token used is one
// of them, so it never expires before that bound. A session may end earlier than its own
// token would (the client re-authenticates or reconnects), never later.
func earliestExpiry(pats []iggy.PersonalAccessToken, now time.Time) time.Time {
	var earliest time.Time
	for _, p := range pats {
		if p.ExpiryAt == 0 || p.ExpiryAt > math.MaxInt64 {
			continue // never expires
		}
		at := time.UnixMicro(int64(p.ExpiryAt))
		if at.After(now) && (earliest.IsZero() || at.Before(earliest)) {
			earliest = at
		}
	}
	return earliest
}

// wellFormed reports whether c fits Iggy's login command.
func wellFormed(c Credentials) bool {
	if c.Token != "" {
		return len(c.Token) <= wire.MaxNameLength
	}
	return c.User != "" && len(c.User) <= wire.MaxNameLength && len(c.Password) <= wire.MaxNameLength
}

// isRejection reports Iggy answers to a login that say the credentials are not valid.
func isRejection(code uint32) bool {
	switch code {
	case iggy.CodeInvalidCredentials, iggy.CodeInvalidUsername, iggy.CodeInvalidPassword,
		iggy.CodeUserInactive, iggy.CodeInvalidPersonalAccessToken, iggy.CodePersonalAccessTokenExpired,
		iggy.CodeUnauthenticated, iggy.CodeUnauthorized, iggy.CodeInvalidFormat, iggy.CodeResourceNotFound:
		return true
	}
	return false
}
