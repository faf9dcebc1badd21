package iggy

import (
	"context"
	"testing"
	"time"
)

func TestEnsureStream(t *testing.T) {
	b := testBackend(t)
	c := dialTest(t, b)
	ctx := testCtx(t)
	name := unique("ensure")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.DeleteStream(ctx, Name(name))
	})
	if created, err := EnsureStream(ctx, c, name); err != nil || !created {
		t.Fatalf("missing stream: created %v, %v", created, err)
	}
	if _, err := c.GetStream(ctx, Name(name)); err != nil {
		t.Fatalf("stream not there after EnsureStream: %v", err)
	}
	if created, err := EnsureStream(ctx, c, name); err != nil || created {
		t.Fatalf("existing stream: created %v, %v", created, err)
	}

	// An account that may read streams but not create them: the existing stream is fine, a
	// missing one is refused with Iggy's code.
	user := unique("reader")
	perms := &Permissions{Global: GlobalPermissions{ReadStreams: true, ReadTopics: true}}
	if _, err := c.CreateUser(ctx, user, "reader-pw", UserActive, perms); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteUser(context.Background(), Name(user)) })
	rc, err := Dial(ctx, Config{Addr: b.addr, Username: user, Password: "reader-pw", PoolSize: 1, PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if created, err := EnsureStream(ctx, rc, name); err != nil || created {
		t.Fatalf("reader, existing stream: created %v, %v", created, err)
	}
	_, err = EnsureStream(ctx, rc, unique("denied"))
	wantCode(t, "reader, missing stream", err, CodeUnauthorized)
}

// lostRace is a stream that another client creates between the look-up and the create.
type lostRace struct{ creates int }

func (r *lostRace) GetStream(context.Context, Identifier) (*Stream, error) {
	return nil, &Error{Code: CodeStreamNameNotFound, Op: "get_stream"}
}

func (r *lostRace) CreateStream(context.Context, string) (*Stream, error) {
	r.creates++
	return nil, &Error{Code: CodeStreamNameAlreadyExists, Op: "create_stream"}
}

func TestEnsureStreamLosingTheRaceIsNoError(t *testing.T) {
	r := &lostRace{}
	if created, err := EnsureStream(context.Background(), r, "s"); err != nil || created || r.creates != 1 {
		t.Fatalf("created %v, err %v, creates %d", created, err, r.creates)
	}
}
