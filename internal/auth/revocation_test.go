package auth_test

import (
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// Open connections of a user deleted or replaced (deleted and created again under
// the same name, which in Iggy may even get the same id) in Iggy are closed at their first
// request after AUTHZ_REFRESH_INTERVAL, without the client re-authenticating, even with
// SASL_SESSION_LIFETIME off. (Deactivation: TestSessionChecker.)
func TestRevokedSessionsLoseTheirConnection(t *testing.T) {
	const refresh = 300 * time.Millisecond
	g := startSecure(t, []string{"SASL_PLAINTEXT"}, "IGGY_KAFKA_AUTHZ_REFRESH_INTERVAL="+refresh.String(), "IGGY_KAFKA_SASL_SESSION_LIFETIME=0")
	ctx := ctxT(t)
	st, err := g.iggy.GetStream(ctx, iggy.Name("kafka"))
	if err != nil {
		t.Fatal(err)
	}
	own := &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: st.ID, ManageStream: true}}}
	for _, tc := range []struct {
		name   string
		revoke func(user string)
	}{
		{"deleted", func(user string) {
			if err := g.iggy.DeleteUser(ctx, iggy.Name(user)); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced", func(user string) {
			if err := g.iggy.DeleteUser(ctx, iggy.Name(user)); err != nil {
				t.Fatal(err)
			}
			if _, err := g.iggy.CreateUser(ctx, user, "new-secret", wire.UserActive, own); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		user := "rev-" + tc.name
		if _, err := g.iggy.CreateUser(ctx, user, "secret", wire.UserActive, own); err != nil {
			t.Fatal(err)
		}
		c := dialRaw(t, g.addrs["SASL_PLAINTEXT"], nil)
		if r := c.authenticate(user, "secret"); r.ErrorCode != 0 {
			t.Fatalf("%s: authenticate: %d", tc.name, r.ErrorCode)
		}
		c.roundTrip(metadataRequest())
		// An unaffected connection of another user stays open.
		other := dialRaw(t, g.addrs["SASL_PLAINTEXT"], nil)
		if r := other.authenticate("alice", "alice-secret"); r.ErrorCode != 0 {
			t.Fatal(r.ErrorCode)
		}
		tc.revoke(user)
		time.Sleep(refresh + 100*time.Millisecond)
		if !c.closedAfter(metadataRequest()) {
			t.Errorf("%s user: its open connection was still served after the refresh interval", tc.name)
		}
		other.roundTrip(metadataRequest())
	}
}
