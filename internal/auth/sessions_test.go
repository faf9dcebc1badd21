package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// usersStub answers GetUser with user (or err) and counts the lookups.
type usersStub struct {
	user    *iggy.User
	err     error
	lookups int
}

func (u *usersStub) GetUser(context.Context, iggy.Identifier) (*iggy.User, error) {
	u.lookups++
	if u.err != nil {
		return nil, u.err
	}
	if u.user == nil {
		return nil, &iggy.Error{Code: iggy.CodeResourceNotFound}
	}
	v := *u.user
	return &v, nil
}

func TestSessionChecker(t *testing.T) {
	id := listener.Identity{User: "alice", UserID: 3, UserCreatedAt: 100, Mechanism: MechanismPlain}
	same := &iggy.User{ID: 3, CreatedAt: 100, Username: "alice", Status: iggy.UserActive}
	changed := func(f func(u *iggy.User)) *iggy.User { u := *same; f(&u); return &u }
	for _, tc := range []struct {
		name string
		user *iggy.User
		err  error
		want error
	}{
		{"unchanged", same, nil, nil},
		{"deleted", nil, nil, ErrSessionRevoked},
		{"deactivated", changed(func(u *iggy.User) { u.Status = iggy.UserInactive }), nil, ErrSessionRevoked},
		{"replaced, same id", changed(func(u *iggy.User) { u.CreatedAt = 200 }), nil, ErrSessionRevoked},
		{"replaced, other id", changed(func(u *iggy.User) { u.ID = 4 }), nil, ErrSessionRevoked},
	} {
		sc := NewSessionChecker(&usersStub{user: tc.user, err: tc.err}, time.Second)
		if err := sc.Check(context.Background(), id); !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// Iggy unreachable: an error, not a revocation (the connection closes all the same).
	sc := NewSessionChecker(&usersStub{err: errors.New("down")}, time.Second)
	if err := sc.Check(context.Background(), id); err == nil || errors.Is(err, ErrSessionRevoked) {
		t.Errorf("lookup failure: %v", err)
	}
	// One lookup per user per interval, however many connections check.
	stub := &usersStub{user: same}
	sc = NewSessionChecker(stub, time.Second)
	now := time.Unix(1000, 0)
	sc.now = func() time.Time { return now }
	for range 3 {
		if err := sc.Check(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	stub.user = nil // deleted: seen once the interval has passed
	if err := sc.Check(context.Background(), id); err != nil || stub.lookups != 1 {
		t.Fatalf("within the interval: %v after %d lookups, want nil after 1", err, stub.lookups)
	}
	now = now.Add(time.Second)
	if err := sc.Check(context.Background(), id); !errors.Is(err, ErrSessionRevoked) || stub.lookups != 2 {
		t.Fatalf("after the interval: %v after %d lookups, want revoked after 2", err, stub.lookups)
	}
}
