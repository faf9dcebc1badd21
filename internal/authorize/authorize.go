package authorize

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/authz"
	"github.com/iggygw/iggy-gateway-kafka/internal/groupacl"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// serveNext runs the handler on a (possibly narrowed) request.
type serveNext func(req kmsg.Request) (kmsg.Response, error)

// authorizeRule checks one request of an identified principal.
type authorizeRule func(c *Checker, ctx context.Context, a *access, req kmsg.Request, next serveNext) (kmsg.Response, error)

// authorizeRules holds the rule of every served key; a test checks that none is missing.
var authorizeRules = map[int16]authorizeRule{}

func authorizeWith[R kmsg.Request](key kmsg.Key, rule func(c *Checker, ctx context.Context, a *access, req R, next serveNext) (kmsg.Response, error)) {
	if _, dup := authorizeRules[key.Int16()]; dup {
		panic(fmt.Sprintf("authorize: %s authorized twice", key.Name()))
	}
	authorizeRules[key.Int16()] = func(c *Checker, ctx context.Context, a *access, req kmsg.Request, next serveNext) (kmsg.Response, error) {
		return rule(c, ctx, a, req.(R), next)
	}
}

// unchecked is the rule of keys every authenticated user may call.
func unchecked(_ *Checker, _ context.Context, _ *access, req kmsg.Request, next serveNext) (kmsg.Response, error) {
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

// Groups is what the group rules need of the consumer groups: the topics a group has
// committed offsets for. *offsets.Store implements it.
type Groups interface {
	Fetch(group string, wanted []offsets.TopicPartitions) ([]offsets.TopicOffsets, error)
}

// Checker holds what the rules decide from: users' permission snapshots, the topic map, the
// group ACLs and the groups' committed offsets.
type Checker struct {
	grants *authz.Cache
	topics *topicmap.Map
	acl    *groupacl.Policy // nil: the user-prefix default without bindings
	groups Groups           // read by the topics default only; nil without the bridge
}

// New returns a Checker over the permission snapshots of grants.
func New(grants *authz.Cache, topics *topicmap.Map, groups Groups, acl *groupacl.Policy) *Checker {
	return &Checker{grants: grants, topics: topics, groups: groups, acl: acl}
}

// Covers reports whether key has a rule: a request without one is refused (Serve).
func Covers(key int16) bool {
	_, ok := authorizeRules[key]
	return ok
}

// Serve serves req of the identified user through its rule: next runs the handler on what the
// rule lets through, and the rule answers the rest.
func (c *Checker) Serve(ctx context.Context, user string, req kmsg.Request, next func(kmsg.Request) (kmsg.Response, error)) (kmsg.Response, error) {
	rule, ok := authorizeRules[req.Key()]
	if !ok {
		return nil, fmt.Errorf("no authorization rule for %s: refused", kmsg.NameForKey(req.Key()))
	}
	g, err := c.grants.Grants(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("reading the permissions of %q from Iggy: %w", user, err)
	}
	a := &access{user: user, grants: g, topics: c.topics}
	resp, err := rule(c, ctx, a, req, next)
	if a.denied {
		c.grants.Stale(user)
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
