package broker

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/auth"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.SASLAuthenticate, route{serve: typed((*Broker).saslAuthenticate)})
}

// authFailedMessage is the one message of every rejected attempt: it must not tell an unknown
// user from a wrong password.
const authFailedMessage = "Authentication failed: invalid credentials"

var errNoHandshake = errors.New("SaslAuthenticate without a SaslHandshake")

// saslAuthenticate verifies the client's credentials with Iggy (docs/SECURITY.md). Rejected:
// SASL_AUTHENTICATION_FAILED, then the connection closes. Not checkable (Iggy unreachable):
// the connection closes without an answer, so that the client retries instead of giving up.
func (b *Broker) saslAuthenticate(ctx context.Context, cc *listener.ConnContext, req *kmsg.SASLAuthenticateRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	defer clear(req.SASLAuthBytes) // the password or token is not kept beyond the check
	mechanism := cc.SASLMechanism()
	cc.SetSASLMechanism("") // one attempt per handshake
	if mechanism == "" || b.authn == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp, errNoHandshake
	}
	id, err := b.authn.Authenticate(ctx, cc.RemoteAddr, mechanism, req.SASLAuthBytes, cc.Identity())
	switch {
	case errors.Is(err, auth.ErrBadCredentials) || errors.Is(err, auth.ErrPrincipalChanged):
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := authFailedMessage
		if errors.Is(err, auth.ErrPrincipalChanged) {
			msg = err.Error()
		}
		resp.ErrorMessage = &msg
		return resp, err
	case err != nil:
		return nil, err
	}
	cc.SetIdentity(id)
	if !id.Expires.IsZero() {
		resp.SessionLifetimeMillis = max(time.Until(id.Expires).Milliseconds(), 1)
	}
	return resp, nil
}
