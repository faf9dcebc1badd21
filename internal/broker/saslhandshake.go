package broker

import (
	"context"
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/auth"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

func init() {
	register(kmsg.SASLHandshake, route{serve: typed((*Broker).saslHandshake)})
}

var errUnsupportedMechanism = errors.New("unsupported SASL mechanism")

// saslHandshake picks the mechanism of the SaslAuthenticate that follows (docs/SECURITY.md).
// An unknown mechanism is answered with the supported list and closes the connection, as in
// Kafka.
func (b *Broker) saslHandshake(_ context.Context, cc *listener.ConnContext, req *kmsg.SASLHandshakeRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.SupportedMechanisms = auth.Mechanisms
	if !slices.Contains(auth.Mechanisms, req.Mechanism) {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		return resp, errUnsupportedMechanism
	}
	cc.SetSASLMechanism(req.Mechanism)
	return resp, nil
}
