package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/authz"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// Authorization of identified principals (docs/SECURITY.md, "Authorization"). A connection
// that authenticated (SASL, or a client certificate mapped to an Iggy user) has every request
// checked against that user's Iggy permissions before its handler runs; anonymous connections
// (PLAINTEXT, SSL without a client certificate) act as the bridge account, unchecked.
//
// Each API key has one rule (the authorize*.go files). A rule narrows the request to what the
// user may do, runs the handler on the rest, and answers the refused parts with Kafka's
// authorization errors (29 topic, 30 group, 31 cluster), as a Kafka broker does. Data still
// travels over the bridge account's connections.

// serveNext runs the handler on a (possibly narrowed) request.
type serveNext func(req kmsg.Request) (kmsg.Response, error)

// authorizeRule checks one request of an identified principal.
type authorizeRule func(b *Broker, ctx context.Context, a *access, req kmsg.Request, next serveNext) (kmsg.Response, error)

// authorizeRules holds the rule of every served key; a test checks that none is missing.
var authorizeRules = map[int16]authorizeRule{}

func authorizeWith[R kmsg.Request](key kmsg.Key, rule func(b *Broker, ctx context.Context, a *access, req R, next serveNext) (kmsg.Response, error)) {
	if _, dup := authorizeRules[key.Int16()]; dup {
		panic(fmt.Sprintf("broker: %s authorized twice", key.Name()))
	}
	authorizeRules[key.Int16()] = func(b *Broker, ctx context.Context, a *access, req kmsg.Request, next serveNext) (kmsg.Response, error) {
		return rule(b, ctx, a, req.(R), next)
	}
}

// unchecked is the rule of keys every authenticated user may call.
func unchecked(_ *Broker, _ context.Context, _ *access, req kmsg.Request, next serveNext) (kmsg.Response, error) {
	return next(req)
}

func init() {
	for _, k := range []kmsg.Key{kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate, kmsg.DescribeCluster} {
		authorizeRules[k.Int16()] = unchecked
	}
}

// access is what one request of an identified principal may do.
type access struct {
	user   string
	grants *authz.Grants
	topics *topicmap.Map
	denied bool // something was refused: the snapshot is read again at the next request
}

func (a *access) target(kafkaTopic string) topicmap.Target { return a.topics.Resolve(kafkaTopic) }

// check records a decision.
func (a *access) check(ok bool) bool {
	if !ok {
		a.denied = true
	}
	return ok
}

func (a *access) canSend(topic string) bool {
	t := a.target(topic)
	return a.check(a.grants.Send(t.Stream, t.Topic))
}

func (a *access) canPoll(topic string) bool {
	t := a.target(topic)
	return a.check(a.grants.Poll(t.Stream, t.Topic))
}

func (a *access) canDescribe(topic string) bool {
	t := a.target(topic)
	return a.check(a.grants.Describe(t.Stream, t.Topic))
}

func (a *access) canCreate(topic string) bool {
	return a.check(a.grants.CreateTopic(a.target(topic).Stream))
}

func (a *access) canManage(topic string) bool {
	t := a.target(topic)
	return a.check(a.grants.ManageTopic(t.Stream, t.Topic))
}

// permissionCache returns the permission snapshots of identified users, read from
// opts.Permissions or, without one, from opts.Iggy; nil when neither can read users, and then
// identified connections are refused (authorized).
func permissionCache(opts Options, refresh time.Duration) *authz.Cache {
	src := opts.Permissions
	if src == nil {
		src, _ = opts.Iggy.(authz.Source)
	}
	if src == nil {
		return nil
	}
	return authz.NewCache(src, refresh)
}

// authorized serves req through its authorization rule when cc has an identity.
func (b *Broker) authorized(ctx context.Context, cc *listener.ConnContext, req kmsg.Request, serve serveFunc) (kmsg.Response, error) {
	next := func(r kmsg.Request) (kmsg.Response, error) { return serve(b, ctx, cc, r) }
	id := cc.Identity()
	if !id.Authenticated() {
		return next(req)
	}
	if b.authz == nil {
		return nil, fmt.Errorf("no permission source for user %q: refused", id.User)
	}
	rule, ok := authorizeRules[req.Key()]
	if !ok {
		return nil, fmt.Errorf("no authorization rule for %s: refused", kmsg.NameForKey(req.Key()))
	}
	g, err := b.authz.Grants(ctx, id.User)
	if err != nil {
		return nil, fmt.Errorf("reading the permissions of %q from Iggy: %w", id.User, err)
	}
	a := &access{user: id.User, grants: g, topics: b.cfg.TopicMap}
	resp, err := rule(b, ctx, a, req, next)
	if a.denied {
		b.authz.Stale(id.User)
	}
	return resp, err
}

// answerRefused runs next on a request narrowed to what the user may do and, when refused
// holds what was taken out of it, answers each refused entry in the handler's response R.
// A nil response (Produce with acks=0) has nothing to answer in.
func answerRefused[T any, R kmsg.Response](req kmsg.Request, next serveNext, refused []T, answer func(resp R, entry T)) (kmsg.Response, error) {
	resp, err := next(req)
	if err != nil || resp == nil || len(refused) == 0 {
		return resp, err
	}
	r := inner(resp).(R)
	for _, e := range refused {
		answer(r, e)
	}
	return resp, nil
}

// inner is the Kafka response inside a listener.Response.
func inner(resp kmsg.Response) kmsg.Response {
	if r, ok := resp.(*listener.Response); ok {
		return r.Response
	}
	return resp
}
