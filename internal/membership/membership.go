// Package membership tells the gateways of one deployment which of them are alive, through
// Iggy alone (docs/DEPLOYMENT.md). Each gateway keeps one Iggy session that is the only
// member of an Iggy consumer group named after its node id, on the coordinator-log topic.
// Iggy ends that membership when the session ends: at once when the gateway's process dies
// (its socket closes), after the heartbeat timeout when its host or network dies. Every
// gateway polls the topic's consumer groups and takes the nodes whose group has a member as
// the live membership, from which internal/placement derives every answer.
//
// Each gateway's group name also carries a fingerprint of the settings that must be the same
// on every gateway sharing the log (Config.Settings): a gateway that finds a live gateway
// with other settings refuses to start, and a running gateway that sees one logs an error at
// every change of the membership (docs/DEPLOYMENT.md, settings every gateway shares).
//
// Why one group per node rather than one shared group with Iggy's own partition assignment:
// Iggy names members by session (client) id, which other gateways cannot map to node ids,
// and its assignment is visible only to each member itself. A group per node makes liveness
// readable by everyone in one GetConsumerGroups call, and ownership then follows from the
// membership the same way on every gateway.
package membership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
)

// API is what membership needs from Iggy: one session (an *iggy.Conn), whose id tells when
// it was replaced by a reconnect and its membership lost.
type API interface {
	CreateConsumerGroup(ctx context.Context, stream, topic iggy.Identifier, name string) (*iggy.ConsumerGroup, error)
	GetConsumerGroups(ctx context.Context, stream, topic iggy.Identifier) ([]iggy.ConsumerGroup, error)
	JoinConsumerGroup(ctx context.Context, stream, topic, group iggy.Identifier) error
	Session() uint64
}

// Config configures a Membership.
type Config struct {
	API           API
	Stream, Topic string // the coordinator-log topic, which must exist
	Self          int32
	Nodes         []int32 // every configured node id, Self included
	// Settings fingerprints the settings every gateway must share (letters and digits); it
	// is part of this gateway's group name.
	Settings string
	// Interval is how often the membership is read; it bounds how long a departed
	// gateway is still taken for live once Iggy has ended its session.
	Interval time.Duration
	// OnChange receives the live node ids (ascending) at Start and whenever they change; nil
	// when this gateway cannot read the membership (it then takes nobody, itself included,
	// for live). It is called from one goroutine at a time.
	OnChange func(live []int32)
	Logger   *slog.Logger
}

// groupPrefix starts the name of every node's Iggy consumer group.
const groupPrefix = "kafka-gateway-node-"

// GroupName is the Iggy consumer group whose membership says node id, running with the
// settings fingerprinted as settings, is alive.
func GroupName(id int32, settings string) string {
	return groupPrefix + strconv.Itoa(int(id)) + "-" + settings
}

// ErrSettingsMismatch is returned by Start when a live gateway runs with other settings.
var ErrSettingsMismatch = errors.New("membership: another live gateway runs with other shared settings")

// Membership is the running membership of one gateway.
type Membership struct {
	cfg           Config
	stream, topic iggy.Identifier
	joined        uint64 // the session that joined Self's group; 0 before
	live          []int32
	known         bool   // live has been reported at least once
	mismatched    string // the live nodes with other settings, as last logged
	cancel        context.CancelFunc
	done          sync.WaitGroup
}

// Start creates this gateway's group if it does not exist yet, checks that no live gateway
// runs with other settings (ErrSettingsMismatch), joins its group, reports the first
// membership and keeps polling until Close.
func Start(ctx context.Context, cfg Config) (*Membership, error) {
	m := &Membership{cfg: cfg, stream: iggy.Name(cfg.Stream), topic: iggy.Name(cfg.Topic)}
	own := GroupName(cfg.Self, cfg.Settings)
	_, err := cfg.API.CreateConsumerGroup(ctx, m.stream, m.topic, own)
	if err != nil && !iggy.IsCode(err, iggy.CodeConsumerGroupNameAlreadyExists) {
		return nil, fmt.Errorf("membership: creating Iggy consumer group %q on %s/%s: %w", own, cfg.Stream, cfg.Topic, err)
	}
	groups, err := m.groups(ctx)
	if err != nil {
		return nil, err
	}
	if _, other := m.read(groups); len(other) > 0 {
		return nil, fmt.Errorf("%w: live gateways %v (this gateway's settings fingerprint is %s; compare the settings each gateway logs at startup)",
			ErrSettingsMismatch, other, cfg.Settings)
	}
	if err := m.poll(ctx); err != nil {
		return nil, err
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.done.Go(func() { m.loop(loopCtx) })
	return m, nil
}

// Close stops polling. The session's membership ends when the caller closes it.
func (m *Membership) Close() {
	m.cancel()
	m.done.Wait()
}

func (m *Membership) loop(ctx context.Context) {
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pollCtx, cancel := context.WithTimeout(ctx, 2*m.cfg.Interval+time.Second)
		err := m.pollSafe(pollCtx)
		cancel()
		if err != nil && ctx.Err() == nil {
			m.cfg.Logger.Warn("cannot read the gateway membership from Iggy; this gateway serves no partition, group or controller request until it can", "err", err)
			m.report(nil)
		}
	}
}

// pollSafe is poll with a panic recovered into its error (internal/supervise): the round
// fails as an unreadable membership would, and polling goes on.
func (m *Membership) pollSafe(ctx context.Context) (err error) {
	defer supervise.Recover(m.cfg.Logger, "membership", &err)
	return m.poll(ctx)
}

// poll rejoins this gateway's group if its session changed, then reads every node's group.
func (m *Membership) poll(ctx context.Context) error {
	if m.joined == 0 || m.cfg.API.Session() != m.joined {
		own := GroupName(m.cfg.Self, m.cfg.Settings)
		if err := m.cfg.API.JoinConsumerGroup(ctx, m.stream, m.topic, iggy.Name(own)); err != nil {
			return fmt.Errorf("membership: joining Iggy consumer group %q: %w", own, err)
		}
		m.joined = m.cfg.API.Session()
	}
	groups, err := m.groups(ctx)
	if err != nil {
		return err
	}
	live, other := m.read(groups)
	if s := fmt.Sprint(other); s != m.mismatched {
		m.mismatched = s
		if len(other) > 0 {
			m.cfg.Logger.Error("live gateways run with other shared settings (stream, topic map, coordinator log, partition count): they and this gateway disagree on where topics and groups are; stop all gateways and start them with the same settings (docs/DEPLOYMENT.md)",
				"nodes", other, "settings", m.cfg.Settings)
		}
	}
	m.report(live)
	return nil
}

func (m *Membership) groups(ctx context.Context) ([]iggy.ConsumerGroup, error) {
	groups, err := m.cfg.API.GetConsumerGroups(ctx, m.stream, m.topic)
	if err != nil {
		return nil, fmt.Errorf("membership: reading Iggy consumer groups of %s/%s: %w", m.cfg.Stream, m.cfg.Topic, err)
	}
	return groups, nil
}

// read returns the configured nodes whose group has a member (ascending), and among them
// those running with other settings. A gateway with other settings still counts as live: it
// serves clients whichever way this gateway answers.
func (m *Membership) read(groups []iggy.ConsumerGroup) (live, other []int32) {
	for _, g := range groups {
		id, settings, ok := nodeOf(g.Name)
		if !ok || g.MembersCount == 0 || !slices.Contains(m.cfg.Nodes, id) {
			continue
		}
		if g.MembersCount > 1 && id == m.cfg.Self && settings == m.cfg.Settings {
			m.cfg.Logger.Warn("another Iggy session is in this gateway's membership group: a second gateway with the same NODE_ID, or the session of this gateway's previous run that Iggy has not ended yet",
				"node_id", id, "group", g.Name, "members", g.MembersCount)
		}
		if settings != m.cfg.Settings {
			other = append(other, id)
		}
		live = append(live, id)
	}
	slices.Sort(live)
	slices.Sort(other)
	return slices.Compact(live), slices.Compact(other)
}

func (m *Membership) report(live []int32) {
	if m.known && slices.Equal(live, m.live) {
		return
	}
	m.cfg.Logger.Info("gateway membership changed", "live", live, "before", m.live)
	m.live, m.known = live, true
	m.cfg.OnChange(slices.Clone(live))
}

// nodeOf parses a node group's name: the node id and the settings fingerprint.
func nodeOf(group string) (id int32, settings string, ok bool) {
	s, ok := strings.CutPrefix(group, groupPrefix)
	if !ok {
		return 0, "", false
	}
	num, settings, ok := strings.Cut(s, "-")
	n, err := strconv.ParseInt(num, 10, 32)
	return int32(n), settings, ok && err == nil && strconv.Itoa(int(n)) == num
}
