package groups

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/groups/groupstest"
)

const (
	testSession   = 10 * time.Second
	testRebalance = 30 * time.Second
	testGroup     = "g"
)

type harness struct {
	t     testing.TB
	c     *Coordinator
	clock *groupstest.Clock
	gens  []GenerationEvent
}

func newHarness(t testing.TB, mutate ...func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, clock: groupstest.NewClock()}
	cfg := DefaultConfig()
	cfg.Clock = h.clock
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.OnGeneration = func(ev GenerationEvent) { h.gens = append(h.gens, ev) }
	for _, m := range mutate {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	return h
}

func noDelay(cfg *Config) { cfg.InitialRebalanceDelay = 0 }

// joinOpt adjusts a JoinGroup request.
type joinOpt func(*kmsg.JoinGroupRequest)

func withVersion(v int16) joinOpt { return func(r *kmsg.JoinGroupRequest) { r.Version = v } }
func withInstance(id string) joinOpt {
	return func(r *kmsg.JoinGroupRequest) { r.InstanceID = kmsg.StringPtr(id) }
}
func withMember(id string) joinOpt { return func(r *kmsg.JoinGroupRequest) { r.MemberID = id } }
func withGroup(g string) joinOpt   { return func(r *kmsg.JoinGroupRequest) { r.Group = g } }
func withType(pt string) joinOpt   { return func(r *kmsg.JoinGroupRequest) { r.ProtocolType = pt } }
func withSession(d time.Duration) joinOpt {
	return func(r *kmsg.JoinGroupRequest) { r.SessionTimeoutMillis = int32(d / time.Millisecond) }
}
func withRebalance(d time.Duration) joinOpt {
	return func(r *kmsg.JoinGroupRequest) { r.RebalanceTimeoutMillis = int32(d / time.Millisecond) }
}

// withProtocols sets the protocols as name, metadata pairs.
func withProtocols(nameMeta ...string) joinOpt {
	return func(r *kmsg.JoinGroupRequest) {
		r.Protocols = nil
		for i := 0; i < len(nameMeta); i += 2 {
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name = nameMeta[i]
			p.Metadata = []byte(nameMeta[i+1])
			r.Protocols = append(r.Protocols, p)
		}
	}
}

func newJoinRequest(opts ...joinOpt) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version = 9
	r.Group = testGroup
	r.SessionTimeoutMillis = int32(testSession / time.Millisecond)
	r.RebalanceTimeoutMillis = int32(testRebalance / time.Millisecond)
	r.ProtocolType = "consumer"
	withProtocols("range", "meta")(r)
	for _, o := range opts {
		o(r)
	}
	return r
}

// pending is a request that may still be parked in the coordinator: its answer is res, or
// arrives on wait.
type pending[R any] struct {
	t    testing.TB
	api  string // for failures: "JoinGroup", "SyncGroup"
	res  R
	wait chan R
	done bool
}

func newPending[R any](t testing.TB, api string, res R, wait chan R) pending[R] {
	return pending[R]{t: t, api: api, res: res, wait: wait, done: wait == nil}
}

func (p *pending[R]) ready() bool {
	if p.done {
		return true
	}
	select {
	case p.res = <-p.wait:
		p.done = true
	default:
	}
	return p.done
}

// result returns the answer, failing the test if the request is still parked.
func (p *pending[R]) result() R {
	p.t.Helper()
	if !p.ready() {
		p.t.Fatalf("%s still parked", p.api)
	}
	return p.res
}

func (p *pending[R]) mustParked() {
	p.t.Helper()
	if p.ready() {
		p.t.Fatalf("%s answered early: %+v", p.api, p.res)
	}
}

// pendingJoin is a JoinGroup that may still be parked in the barrier.
type pendingJoin struct{ pending[joinResult] }

func (h *harness) startJoin(client string, opts ...joinOpt) *pendingJoin {
	res, wait := h.c.startJoin(Client{ID: client, Host: "/127.0.0.1"}, newJoinRequest(opts...))
	return &pendingJoin{newPending(h.t, "JoinGroup", res, wait)}
}

func (p *pendingJoin) ok() joinResult {
	p.t.Helper()
	r := p.result()
	if r.code != 0 {
		p.t.Fatalf("JoinGroup failed: %v", kerr.ErrorForCode(r.code))
	}
	return r
}

func (p *pendingJoin) fails(want *kerr.Error) joinResult {
	p.t.Helper()
	r := p.result()
	if r.code != want.Code {
		p.t.Fatalf("JoinGroup error = %v, want %v", kerr.ErrorForCode(r.code), want)
	}
	return r
}

// joinNew performs the KIP-394 handshake for a new dynamic member and returns its parked
// join.
func (h *harness) joinNew(client string, opts ...joinOpt) (*pendingJoin, string) {
	h.t.Helper()
	first := h.startJoin(client, opts...).fails(kerr.MemberIDRequired)
	if first.memberID == "" {
		h.t.Fatal("MEMBER_ID_REQUIRED without a member id")
	}
	return h.startJoin(client, append(opts, withMember(first.memberID))...), first.memberID
}

// pendingSync is a SyncGroup that may still be parked waiting for the leader's assignment.
type pendingSync struct{ pending[syncResult] }

func syncRequest(member string, gen int32, assignments ...string) *kmsg.SyncGroupRequest {
	r := kmsg.NewPtrSyncGroupRequest()
	r.Version = 5
	r.Group = testGroup
	r.MemberID = member
	r.Generation = gen
	for i := 0; i < len(assignments); i += 2 {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID = assignments[i]
		a.MemberAssignment = []byte(assignments[i+1])
		r.GroupAssignment = append(r.GroupAssignment, a)
	}
	return r
}

func (h *harness) startSync(req *kmsg.SyncGroupRequest) *pendingSync {
	res, wait := h.c.startSync(req)
	return &pendingSync{newPending(h.t, "SyncGroup", res, wait)}
}

func (h *harness) sync(member string, gen int32, assignments ...string) *pendingSync {
	return h.startSync(syncRequest(member, gen, assignments...))
}

func (p *pendingSync) assignment() string {
	p.t.Helper()
	r := p.result()
	if r.code != 0 {
		p.t.Fatalf("SyncGroup failed: %v", kerr.ErrorForCode(r.code))
	}
	return string(r.assignment)
}

func (p *pendingSync) fails(want *kerr.Error) {
	p.t.Helper()
	if r := p.result(); r.code != want.Code {
		p.t.Fatalf("SyncGroup error = %v, want %v", kerr.ErrorForCode(r.code), want)
	}
}

func (h *harness) heartbeat(member string, gen int32, instance ...string) *kerr.Error {
	r := kmsg.NewPtrHeartbeatRequest()
	r.Version = 4
	r.Group = testGroup
	r.MemberID = member
	r.Generation = gen
	if len(instance) > 0 {
		r.InstanceID = kmsg.StringPtr(instance[0])
	}
	return kerr.TypedErrorForCode(h.c.Heartbeat(r).ErrorCode)
}

func (h *harness) mustHeartbeat(member string, gen int32, want *kerr.Error) {
	h.t.Helper()
	if got := h.heartbeat(member, gen); got != want {
		h.t.Fatalf("heartbeat(%s, gen %d) = %v, want %v", member, gen, got, want)
	}
}

func (h *harness) describe() kmsg.DescribeGroupsResponseGroup {
	r := kmsg.NewPtrDescribeGroupsRequest()
	r.Version = 5
	r.Groups = []string{testGroup}
	return h.c.DescribeGroups(r).Groups[0]
}

func (h *harness) state() string { return h.describe().State }

func (h *harness) mustState(want string) {
	h.t.Helper()
	if got := h.state(); got != want {
		h.t.Fatalf("group state = %s, want %s", got, want)
	}
}

func memberIDs(ms []kmsg.JoinGroupResponseMember) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.MemberID
	}
	sort.Strings(ids)
	return ids
}

// joinedGroup has clients join as new dynamic members and completes the join round: the
// group then waits for SyncGroup. It returns the member ids, in the order of clients, and
// the leader and generation every member was told.
func (h *harness) joinedGroup(clients ...string) (ids []string, leader string, gen int32) {
	h.t.Helper()
	if len(clients) > 1 && h.c.cfg.InitialRebalanceDelay == 0 {
		h.t.Fatal("joinedGroup needs the initial rebalance delay to gather several members")
	}
	joins := make([]*pendingJoin, len(clients))
	ids = make([]string, len(clients))
	for i, cl := range clients {
		joins[i], ids[i] = h.joinNew(cl)
	}
	// The first delay window sees the others arrive and extends once.
	h.clock.Advance(2 * h.c.cfg.InitialRebalanceDelay)
	for i, j := range joins {
		r := j.ok()
		if i > 0 && (r.leader != leader || r.generation != gen) {
			h.t.Fatalf("member %s was told leader %s generation %d, member %s leader %s generation %d",
				clients[i], r.leader, r.generation, clients[0], leader, gen)
		}
		leader, gen = r.leader, r.generation
	}
	return ids, leader, gen
}

// stableGroup forms a new group of the given dynamic members, all joining within the
// initial rebalance delay, and syncs assignment "a-<client>" to each. It returns the member
// ids in join order and the generation.
func (h *harness) stableGroup(clients ...string) ([]string, int32) {
	h.t.Helper()
	ids, leader, gen := h.joinedGroup(clients...)
	var assignments []string
	for i, id := range ids {
		assignments = append(assignments, id, "a-"+clients[i])
	}
	syncs := make([]*pendingSync, len(ids))
	for i, id := range ids {
		if id != leader {
			syncs[i] = h.sync(id, gen)
		}
	}
	for i, id := range ids {
		if id == leader {
			syncs[i] = h.sync(id, gen, assignments...)
		}
	}
	for i, s := range syncs {
		if got := s.assignment(); got != "a-"+clients[i] {
			h.t.Fatalf("member %s got assignment %q", clients[i], got)
		}
	}
	h.mustState("Stable")
	return ids, gen
}

// fakeStored is an in-memory Stored.
type fakeStored struct {
	mu     sync.Mutex
	groups map[string]storedGroup
	err    error
}

type storedGroup struct {
	protocolType string
	generation   int32
}

func (s *fakeStored) LookupGroup(name string) (string, int32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[name]
	return g.protocolType, g.generation, ok
}

func (s *fakeStored) RangeGroups(fn func(name, protocolType string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, g := range s.groups {
		fn(n, g.protocolType)
	}
}

func (s *fakeStored) DeleteGroup(_ context.Context, name string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false, s.err
	}
	_, ok := s.groups[name]
	delete(s.groups, name)
	return ok, nil
}
