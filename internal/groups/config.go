package groups

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Config configures a Coordinator. Start from DefaultConfig.
type Config struct {
	Clock  Clock
	Logger *slog.Logger

	// Stored is the committed-offset side of group existence; nil when nothing is stored
	// (no bridge), in which case groups without members simply do not exist.
	Stored Stored

	// OnGeneration, if set, is called whenever a join barrier completes and a new generation
	// starts (including the generation in which a group becomes empty). It is called with the
	// group's lock held: it must not block or call back into the Coordinator.
	OnGeneration func(GenerationEvent)

	// Kafka's group.min.session.timeout.ms and group.max.session.timeout.ms: JoinGroup with a
	// session timeout outside the range fails with INVALID_SESSION_TIMEOUT.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration

	// InitialRebalanceDelay is Kafka's group.initial.rebalance.delay.ms: a group that starts
	// empty waits this long (extended while new members keep arriving, up to the rebalance
	// timeout) before completing its first join barrier. Zero disables the delay.
	InitialRebalanceDelay time.Duration

	// NewMemberJoinTimeout bounds how long a member that joined without a member id may wait
	// in a join barrier before it is dropped (Kafka's 5 minute new-member join timeout).
	NewMemberJoinTimeout time.Duration

	// Limits. A new group beyond MaxGroups fails with COORDINATOR_NOT_AVAILABLE (retriable);
	// a member beyond MaxGroupSize, or metadata that would grow the group's stored metadata and
	// assignments beyond MaxGroupBytes, fails with GROUP_MAX_SIZE_REACHED. A group id or
	// group.instance.id longer than MaxIDBytes fails with INVALID_GROUP_ID / INVALID_REQUEST.
	// More than MaxProtocols protocols, or more than MaxMemberMetadataBytes of protocol metadata
	// in one JoinGroup, fails with INVALID_REQUEST; an assignment larger than
	// MaxAssignmentBytes fails the SyncGroup round with MESSAGE_TOO_LARGE.
	MaxGroups              int
	MaxGroupSize           int
	MaxGroupBytes          int
	MaxIDBytes             int
	MaxProtocols           int
	MaxMemberMetadataBytes int
	MaxAssignmentBytes     int

	// Consumer configures the consumer group protocol (KIP-848).
	Consumer ConsumerConfig
}

// DefaultConfig returns Kafka's defaults where Kafka has one, and bounds where it has none.
func DefaultConfig() Config {
	return Config{
		Clock:                  SystemClock{},
		Logger:                 slog.Default(),
		MinSessionTimeout:      6 * time.Second,
		MaxSessionTimeout:      30 * time.Minute,
		InitialRebalanceDelay:  3 * time.Second,
		NewMemberJoinTimeout:   5 * time.Minute,
		MaxGroups:              10000,
		MaxGroupSize:           1000,
		MaxGroupBytes:          32 << 20,
		MaxIDBytes:             255,
		MaxProtocols:           32,
		MaxMemberMetadataBytes: 1 << 20,
		MaxAssignmentBytes:     1 << 20,
		Consumer:               DefaultConsumerConfig(),
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.Clock == nil {
		errs = append(errs, errors.New("no Clock set"))
	}
	if c.Logger == nil {
		errs = append(errs, errors.New("no Logger set"))
	}
	if c.MinSessionTimeout <= 0 || c.MaxSessionTimeout < c.MinSessionTimeout {
		errs = append(errs, fmt.Errorf("session timeout range [%v, %v] is invalid", c.MinSessionTimeout, c.MaxSessionTimeout))
	}
	if c.InitialRebalanceDelay < 0 || c.NewMemberJoinTimeout <= 0 {
		errs = append(errs, errors.New("InitialRebalanceDelay must be >= 0 and NewMemberJoinTimeout > 0"))
	}
	for name, v := range map[string]int{
		"MaxGroups": c.MaxGroups, "MaxGroupSize": c.MaxGroupSize, "MaxGroupBytes": c.MaxGroupBytes,
		"MaxIDBytes": c.MaxIDBytes, "MaxProtocols": c.MaxProtocols,
		"MaxMemberMetadataBytes": c.MaxMemberMetadataBytes, "MaxAssignmentBytes": c.MaxAssignmentBytes,
	} {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be > 0", name))
		}
	}
	if err := c.Consumer.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("groups: invalid config: %w", err)
	}
	return nil
}

// Stored is what the coordinator needs from committed-offset storage: groups that exist only
// through stored state (offsets or a recorded generation) are reported as Empty, as Kafka does
// for groups without members. The offsets package implements it.
type Stored interface {
	// LookupGroup reports whether name has stored state, with the protocol type and the last
	// generation recorded for it (zero values when none was recorded).
	LookupGroup(name string) (protocolType string, generation int32, ok bool)
	// RangeGroups calls fn for every group with stored state. fn must not call back into the
	// Stored implementation.
	RangeGroups(fn func(name, protocolType string))
	// DeleteGroup deletes the group's stored state and reports whether there was any. A failure
	// carries a *kerr.Error (for example COORDINATOR_LOAD_IN_PROGRESS).
	DeleteGroup(ctx context.Context, name string) (existed bool, err error)
}

// GenerationEvent describes a generation that has just started.
type GenerationEvent struct {
	Group        string
	Generation   int32
	ProtocolType string
	Protocol     string // empty when the group became empty
	Leader       string
	Members      int
}

// Client identifies the connection a request came from; DescribeGroups reports it per member.
type Client struct {
	ID   string // the request header's client id
	Host string // the peer address, e.g. "/10.0.0.7"
}
