package broker

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// serveFunc is a handler bound to nothing yet; Broker binds it to itself.
type serveFunc func(b *Broker, ctx context.Context, cc *listener.ConnContext, req kmsg.Request) (kmsg.Response, error)

// route is how one API key is served.
type route struct {
	serve serveFunc
	// concurrent, pipelined, frameReusable, abandonedOnClose: see listener.Handler.
	concurrent       bool
	pipelined        bool
	frameReusable    bool
	abandonedOnClose bool
	// invalid builds the INVALID_REQUEST answer for an undecodable request; nil closes.
	invalid func(req kmsg.Request) kmsg.Response
	// normalize, when set, states in the request's fields what its version implies, before
	// authorization and the handler read it: both then decide from the same fields.
	normalize func(req kmsg.Request)
}

// routes is filled by the init functions of the handler files.
var routes = map[int16]route{}

func register(key kmsg.Key, r route) {
	if _, dup := routes[key.Int16()]; dup {
		panic(fmt.Sprintf("broker: %s registered twice", key.Name()))
	}
	routes[key.Int16()] = r
}

// typed adapts a handler that takes its concrete request type.
func typed[R kmsg.Request](fn func(*Broker, context.Context, *listener.ConnContext, R) (kmsg.Response, error)) serveFunc {
	return func(b *Broker, ctx context.Context, cc *listener.ConnContext, req kmsg.Request) (kmsg.Response, error) {
		return fn(b, ctx, cc, req.(R))
	}
}
