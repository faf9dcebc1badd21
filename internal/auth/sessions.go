package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// ErrSessionRevoked: the user an open connection authenticated as was deleted, deactivated or
// replaced (deleted and created again under the same name) in Iggy.
var ErrSessionRevoked = errors.New("the Iggy user was deleted, deactivated or replaced since the connection authenticated")

// SessionChecker re-verifies open connections' identities against Iggy (a
// listener.Config.SessionCheck): the user must still exist, be active and have the id it had
// when the connection authenticated. What Iggy answers for a user is trusted for Interval, so
// all connections of a user cost one lookup per Interval. Password changes and deleted tokens
// cannot be seen this way (Iggy keeps no trace of them the gateway could read, and the gateway
// keeps no secret to log in with again): SASL_SESSION_LIFETIME bounds those
// (docs/SECURITY.md, "Revocation bound").
type SessionChecker struct {
	Users    UserLookup
	Interval time.Duration
	now      func() time.Time

	mu    sync.Mutex
	users map[string]*userCheck
}

type userCheck struct {
	mu sync.Mutex // held while looking up, so the connections of a user share one lookup
	userSeen
}

// userSeen is what Iggy said about a user, and when.
type userSeen struct {
	at      time.Time
	found   bool
	active  bool
	id      uint32
	created uint64
}

// NewSessionChecker returns a checker reading users with users.
func NewSessionChecker(users UserLookup, interval time.Duration) *SessionChecker {
	return &SessionChecker{Users: users, Interval: interval, now: time.Now, users: map[string]*userCheck{}}
}

// Check returns nil when id's user is still the one it authenticated as, ErrSessionRevoked
// when it is not, or the error of an Iggy lookup that failed.
func (s *SessionChecker) Check(ctx context.Context, id listener.Identity) error {
	s.mu.Lock()
	u := s.users[id.User]
	if u == nil {
		u = &userCheck{}
		s.users[id.User] = u
	}
	s.mu.Unlock()
	u.mu.Lock()
	defer u.mu.Unlock()
	if now := s.now(); u.at.IsZero() || now.Sub(u.at) >= s.Interval {
		got, err := s.Users.GetUser(ctx, iggy.Name(id.User))
		switch {
		case iggy.IsCode(err, iggy.CodeResourceNotFound, iggy.CodeInvalidUsername):
			u.userSeen = userSeen{at: now}
		case err != nil:
			return fmt.Errorf("checking the Iggy user: %w", err)
		default:
			u.userSeen = userSeen{at: now, found: true, active: got.Status == wire.UserActive, id: got.ID, created: got.CreatedAt}
		}
	}
	if !u.found || !u.active || u.id != id.UserID || u.created != id.UserCreatedAt {
		return ErrSessionRevoked
	}
	return nil
}
