package broker

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/auth"
	"github.com/iggygw/iggy-gateway-kafka/internal/authorize"
	"github.com/iggygw/iggy-gateway-kafka/internal/authz"
	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/dataplane"
	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/keylock"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/loglimit"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/placement"
	"github.com/iggygw/iggy-gateway-kafka/internal/producers"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicstate"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
	"github.com/iggygw/iggy-gateway-kafka/internal/versions"
)

// Options configure a Broker.
type Options struct {
	Config *config.Config
	// Iggy is the bridge's storage (an *iggy.Client, or a layer in front of one); nil when
	// the bridge is off (storage-free answers).
	Iggy Storage
	// ClusterID is reported by Metadata and DescribeCluster; see ClusterID.
	ClusterID string
	Logger    *slog.Logger
	// Offsets is the committed-offset store, already loaded; nil without the bridge.
	Offsets *offsets.Store
	// Groups configures the group coordinator (nil: groups.DefaultConfig()); New sets its
	// Logger, Stored and OnGeneration.
	Groups *groups.Config
	// Placement says which broker leads each partition, coordinates each group and is the
	// controller (nil: this gateway, placement.Single).
	Placement placement.Placement
	// Authenticator verifies SASL credentials; nil when no listener uses SASL.
	Authenticator *auth.Authenticator
	// Epochs is the leader-epoch log (nil: epochs kept in memory only); Data().LoadEpochs
	// reads it.
	Epochs dataplane.EpochLog
	// OnTruncation, if set, is called for each partition truncation detected (a metrics hook).
	OnTruncation func()
	// Permissions is where identified users' Iggy permissions are read (internal/authorize); nil:
	// Iggy, when it can read users (an *iggy.Client can).
	Permissions authz.Source
	// DataObserver learns the records produced and fetched per topic (nil: nobody).
	DataObserver dataplane.DataObserver
	// TopicState keeps the topic configs Iggy has no option for and DeleteRecords' log start
	// offsets, already loaded; nil without the bridge (those configs are then refused).
	TopicState *topicstate.Store
	// IggyNodes is how many Iggy nodes hold a copy of every partition (the cluster's size);
	// nil: one. It bounds CreateTopics' replication factor and Metadata's replicas.
	IggyNodes func() int
	// LogLimiter rate-limits the log lines a request can cause once per partition, topic or
	// resource (logs.go); nil: not limited.
	LogLimiter *loglimit.Limiter
}

// Broker is the state shared by the handlers. It implements listener.Dispatcher.
type Broker struct {
	cfg       *config.Config
	iggy      Storage // reached through storage(cc)
	log       *slog.Logger
	logLimit  *loglimit.Limiter // per-entry log lines (logs.go)
	clusterID string
	placement placement.Placement
	topics    *topicmap.Cache
	producers *producers.Allocator
	authn     *auth.Authenticator
	access    *authorize.Checker // identified users' requests; nil without a permission source
	data      *dataplane.Plane   // Produce, Fetch, ListOffsets, OffsetForLeaderEpoch, DeleteRecords
	txn       *txn.Coordinator   // transactions (SetTransactions); nil: refused
	groups    groupState

	state *topicstate.Store // stored topic configs and log start offsets; may be nil

	iggyNodes func() int // Options.IggyNodes

	// adminLocks serialise, per Iggy topic, topic administration that reads Iggy state before
	// changing it (CreatePartitions adds to the current count). Per topic, not one lock: a
	// slow Iggy answer for one topic must not stall other topics' requests (issue 25).
	adminLocks keylock.Locks[topicmap.Target]

	handlers map[int16]listener.Handler
	// unsupportedAPIVersions serves ApiVersions at versions outside the table (KIP-511).
	unsupportedAPIVersions listener.Handler

	mu        sync.RWMutex
	endpoints map[string]endpoint // advertised address by listener name
}

// endpoint is the advertised address of a listener.
type endpoint struct {
	host     string
	port     int32
	protocol string
}

// New returns a Broker.
func New(opts Options) (*Broker, error) {
	cfg := opts.Config
	alloc, err := producers.NewAllocator(cfg.NodeID)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
		opts.Logger = log
	}
	gs, err := newGroupState(opts)
	if err != nil {
		return nil, err
	}
	b := &Broker{
		cfg:       cfg,
		iggy:      opts.Iggy,
		log:       log,
		logLimit:  opts.LogLimiter,
		clusterID: opts.ClusterID,
		producers: alloc,
		authn:     opts.Authenticator,
		state:     opts.TopicState,
		iggyNodes: opts.IggyNodes,
		groups:    gs,
		handlers:  make(map[int16]listener.Handler, len(routes)),
		endpoints: make(map[string]endpoint, len(cfg.Listeners)),
	}
	b.placement = opts.Placement
	if b.placement == nil {
		b.placement = placement.Single{NodeID: b.nodeID(), Advertised: b.advertised}
	}
	if b.clusterID == "" {
		b.clusterID = ClusterID("")
	}
	if opts.Iggy != nil {
		b.topics = topicmap.NewCache(cfg.TopicMap, b.lookupTopic, 0)
		b.access = newChecker(opts, cfg.AuthzRefreshInterval)
	}
	b.data = dataplane.New(dataplane.Options{
		Config: cfg, Storage: opts.Iggy, Topics: b.topics, Placement: b.placement, TopicState: opts.TopicState,
		Epochs: opts.Epochs, OnTruncation: opts.OnTruncation, Observer: opts.DataObserver,
		Logger: log, LogLimiter: opts.LogLimiter,
	})
	for _, l := range cfg.Listeners {
		b.endpoints[l.Name] = endpoint{host: l.AdvertisedHost, port: int32(l.AdvertisedPort), protocol: l.Protocol}
	}
	for key, r := range routes {
		b.handlers[key] = b.bind(r)
	}
	b.unsupportedAPIVersions = listener.Handler{Serve: b.serveUnsupportedAPIVersions, Concurrent: true, Undecoded: true}
	return b, nil
}

func (b *Broker) bind(r route) listener.Handler {
	serve, normalize := r.serve, r.normalize
	return listener.Handler{
		Serve: func(ctx context.Context, cc *listener.ConnContext, req kmsg.Request) (kmsg.Response, error) {
			if normalize != nil {
				normalize(req)
			}
			return b.authorized(ctx, cc, req, serve)
		},
		Concurrent:       r.concurrent,
		Pipelined:        r.pipelined,
		FrameReusable:    r.frameReusable,
		AbandonedOnClose: r.abandonedOnClose,
		InvalidRequest:   r.invalid,
	}
}

// SetAdvertisedPort fills in the port of a listener bound to port 0 once the OS chose it.
func (b *Broker) SetAdvertisedPort(listenerName string, port int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.endpoints[listenerName]; ok && e.port == 0 {
		e.port = int32(port)
		b.endpoints[listenerName] = e
	}
}

// endpointOf returns the advertised address of a listener.
func (b *Broker) endpointOf(listenerName string) endpoint {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.endpoints[listenerName]
}

// advertised is this gateway's address on a listener, for placement.Single.
func (b *Broker) advertised(listenerName string) (string, int32) {
	e := b.endpointOf(listenerName)
	return e.host, e.port
}

func (b *Broker) sasl(cc *listener.ConnContext) bool {
	p := b.endpointOf(cc.Listener).protocol
	return p == "SASL_PLAINTEXT" || p == "SASL_SSL"
}

// nodeID is this gateway's broker id.
func (b *Broker) nodeID() int32 { return int32(b.cfg.NodeID) }

// Lookup implements listener.Dispatcher: the version firewall, derived from internal/versions.
func (b *Broker) Lookup(cc *listener.ConnContext, key, version int16) (listener.Handler, bool) {
	h, ok := b.handlers[key]
	if !ok {
		return listener.Handler{}, false
	}
	if versions.Accepts(key, version, b.sasl(cc)) {
		return h, true
	}
	if key == kmsg.ApiVersions.Int16() {
		return b.unsupportedAPIVersions, true
	}
	return listener.Handler{}, false
}

// ClusterID derives a stable Kafka cluster id (22 characters of URL-safe base64, like Kafka's)
// from seed, so that every start of a gateway against the same Iggy reports the same id.
func ClusterID(seed string) string {
	sum := sha256.Sum256([]byte("iggy-gateway-kafka cluster " + seed))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// authorized serves req through its authorization rule (internal/authorize) when cc has an
// identity; anonymous connections act as the bridge account, unchecked.
func (b *Broker) authorized(ctx context.Context, cc *listener.ConnContext, req kmsg.Request, serve serveFunc) (kmsg.Response, error) {
	next := func(r kmsg.Request) (kmsg.Response, error) { return serve(b, ctx, cc, r) }
	id := cc.Identity()
	if !id.Authenticated() {
		return next(req)
	}
	if b.access == nil {
		return nil, fmt.Errorf("no permission source for user %q: refused", id.User)
	}
	return b.access.Serve(ctx, id.User, req, next)
}

// newChecker returns the authorization of identified users, with permissions read from
// opts.Permissions or, without one, from opts.Iggy; nil when neither can read users, and then
// identified connections are refused (authorized).
func newChecker(opts Options, refresh time.Duration) *authorize.Checker {
	src := opts.Permissions
	if src == nil {
		src, _ = opts.Iggy.(authz.Source)
	}
	if src == nil {
		return nil
	}
	var groups authorize.Groups
	if opts.Offsets != nil {
		groups = opts.Offsets
	}
	return authorize.New(authz.NewCache(src, refresh), opts.Config.TopicMap, groups, opts.Config.GroupACL)
}

// Data is the broker's data plane, for the composition root's hooks (Iggy reconnects, leader
// epochs, the tail cache's metrics) and its Close.
func (b *Broker) Data() *dataplane.Plane { return b.data }

// bridgeOff reports whether handlers must give storage-free answers.
func (b *Broker) bridgeOff() bool { return b.iggy == nil }

// lookupTopic is the topic cache's view of Iggy.
func (b *Broker) lookupTopic(ctx context.Context, t topicmap.Target) (uint32, uint32, uint64, error) {
	topic, err := b.storage(nil).GetTopic(ctx, iggy.Name(t.Stream), iggy.Name(t.Topic))
	if err != nil {
		return 0, 0, 0, err
	}
	return topic.ID, topic.PartitionsCount, topic.CreatedAt, nil
}
