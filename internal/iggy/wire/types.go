package wire

// The data types below are shared by the client (package iggy re-exports them as aliases) and
// the in-memory server, so both sides encode and decode the same structures.

import (
	"math"

	"github.com/iggygw/iggy-gateway-kafka/internal/bufpool"
)

// Identifier names a stream, topic, consumer group or user either by its numeric id (0-based)
// or by its name.
type Identifier struct {
	Numeric uint32
	Name    string // used when non-empty
}

// IsName reports whether the identifier is a name.
func (i Identifier) IsName() bool { return i.Name != "" }

// Never is the value of MessageExpiry and MaxTopicSize that means "never expire" / "unlimited".
const Never = math.MaxUint64

// Stream is a stream as Iggy reports it.
type Stream struct {
	ID            uint32
	CreatedAt     uint64 // µs since the Unix epoch
	Name          string
	TopicsCount   uint32
	SizeBytes     uint64
	MessagesCount uint64
	Topics        []Topic // only filled by GetStream
}

// Topic is a topic as Iggy reports it.
type Topic struct {
	ID              uint32
	CreatedAt       uint64
	Name            string
	PartitionsCount uint32
	MessageExpiry   uint64 // µs; Never = never expire
	MaxTopicSize    uint64 // bytes; Never = unlimited
	Compression     uint8  // 1 none, 2 gzip
	SizeBytes       uint64
	MessagesCount   uint64
	Partitions      []Partition // filled by GetTopic and CreateTopic
	// Options are the options the topic was created (or updated) with, and DerivedOptions
	// the values the server resolved for the options that were not given: the explicit and
	// derived blocks of the TopicHeader. A 0.9 server reports every create-only option in one
	// of the two; InForce merges them.
	Options, DerivedOptions TopicOptions
}

// InForce returns the topic's options in force: the explicit ones over the derived ones.
func (t *Topic) InForce() TopicOptions {
	o := t.DerivedOptions
	e := t.Options
	if e.Compression != "" {
		o.Compression = e.Compression
	}
	if e.MessageExpiry != 0 {
		o.MessageExpiry = e.MessageExpiry
	}
	if e.MaxTopicSize != 0 {
		o.MaxTopicSize = e.MaxTopicSize
	}
	if e.EnforceFsync != nil {
		o.EnforceFsync = e.EnforceFsync
	}
	if e.MessagesRequiredToSave != 0 {
		o.MessagesRequiredToSave = e.MessagesRequiredToSave
	}
	if e.SizeOfMessagesRequiredToSave != 0 {
		o.SizeOfMessagesRequiredToSave = e.SizeOfMessagesRequiredToSave
	}
	return o
}

// Partition is a partition as Iggy reports it. CurrentOffset is the offset of the last message
// and is 0 for an empty partition: tell the two apart with MessagesCount.
type Partition struct {
	ID            uint32
	CreatedAt     uint64
	SegmentsCount uint32
	CurrentOffset uint64
	SizeBytes     uint64
	MessagesCount uint64
}

// HighWatermark is one past the last offset (0 for an empty partition).
func (p Partition) HighWatermark() uint64 {
	if p.MessagesCount == 0 {
		return 0
	}
	return p.CurrentOffset + 1
}

// TopicOptions are the options of CreateTopic and UpdateTopic. Zero values mean "server
// default" on create and "unchanged" on update.
type TopicOptions struct {
	MessageExpiry uint64 // µs; Never = never expire
	MaxTopicSize  uint64 // bytes; Never = unlimited
	Compression   string // "none" or "gzip"; empty = default/unchanged

	// The flush settings below are create-only. A partition keeps appended messages in
	// process memory until MessagesRequiredToSave messages or SizeOfMessagesRequiredToSave
	// bytes are unsaved, then writes them to its segment file (fsyncing when EnforceFsync);
	// see docs/DURABILITY.md.
	EnforceFsync                 *bool  // nil = server default (false)
	MessagesRequiredToSave       uint32 // 0 = server default (1024)
	SizeOfMessagesRequiredToSave uint64 // bytes; 0 = server default (1 MiB)
}

// Message is a message to send. Headers is an encoded user-headers block (see
// AppendHeader), which lets callers build headers without per-header allocations.
type Message struct {
	ID              [16]byte // opaque; zero lets the client fill a random id
	OriginTimestamp uint64   // µs; 0 = now
	Payload         []byte
	Headers         []byte
}

// PolledMessage is one message returned by PollMessages. Payload and Headers alias the reply
// buffer and stay valid until the Polled value is dropped.
type PolledMessage struct {
	Offset          uint64
	Timestamp       uint64 // server append time, µs
	OriginTimestamp uint64 // producer time, µs
	ID              [16]byte
	Checksum        uint64
	Payload         []byte
	Headers         []byte // encoded user-headers block; iterate with ParseHeaders
}

// Polled is the reply of PollMessages.
type Polled struct {
	PartitionID   uint32
	CurrentOffset uint64
	Messages      []PolledMessage
	buf           []byte // the reply buffer Messages alias, for Release; nil when not owned
}

// Own makes buf, the reply buffer the messages alias, p's to give back with Release.
func (p *Polled) Own(buf []byte) { p.buf = buf }

// Release hands the reply buffer back for reuse by later replies and empties Messages. Call
// it only when nothing refers to the messages' payloads or headers any more; a Polled that is
// never released is left to the garbage collector, which is always safe.
func (p *Polled) Release() {
	if p.buf != nil {
		bufpool.Put(p.buf)
		p.buf = nil
	}
	p.Messages = nil
}

// Consumer kinds.
const (
	ConsumerKindConsumer uint8 = 1
	ConsumerKindGroup    uint8 = 2
)

// Consumer identifies who polls or stores offsets.
type Consumer struct {
	Kind uint8
	ID   Identifier
}

// Polling strategy kinds.
const (
	PollOffset    uint8 = 1
	PollTimestamp uint8 = 2
	PollFirst     uint8 = 3
	PollLast      uint8 = 4
	PollNext      uint8 = 5
)

// PollingStrategy selects where a poll starts.
type PollingStrategy struct {
	Kind  uint8
	Value uint64
}

// PollRequest is the input of PollMessages. A nil Partition means "unset".
type PollRequest struct {
	Consumer   Consumer
	Stream     Identifier
	Topic      Identifier
	Partition  *uint32
	Strategy   PollingStrategy
	Count      uint32
	AutoCommit bool
}

// SendConfirmation is Iggy's confirmation of a send: BaseOffset is the offset of the first
// message of the batch.
type SendConfirmation struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	BaseOffset  uint64
}

// ConsumerOffset is the reply of GetConsumerOffset.
type ConsumerOffset struct {
	PartitionID   uint32
	CurrentOffset uint64
	StoredOffset  uint64
}

// ConsumerGroup is an Iggy consumer group.
type ConsumerGroup struct {
	ID              uint32
	Name            string
	PartitionsCount uint32
	MembersCount    uint32
	Members         []ConsumerGroupMember
}

// ConsumerGroupMember is one member and its assigned partitions.
type ConsumerGroupMember struct {
	ID         uint32
	Partitions []uint32
}

// GroupAssignment is the reply of SyncConsumerGroup.
type GroupAssignment struct {
	Generation uint64
	Partitions []uint32
}

// GlobalPermissions are a user's server-wide permissions.
type GlobalPermissions struct {
	ManageServers, ReadServers, ManageUsers, ReadUsers, ManageStreams, ReadStreams,
	ManageTopics, ReadTopics, PollMessages, SendMessages bool
}

// StreamPermissions are a user's permissions on one stream.
type StreamPermissions struct {
	StreamID                                                                       uint32
	ManageStream, ReadStream, ManageTopics, ReadTopics, PollMessages, SendMessages bool
	Topics                                                                         []TopicPermissions
}

// TopicPermissions are a user's permissions on one topic.
type TopicPermissions struct {
	TopicID                                            uint32
	ManageTopic, ReadTopic, PollMessages, SendMessages bool
}

// Permissions are all of a user's permissions.
type Permissions struct {
	Global  GlobalPermissions
	Streams []StreamPermissions
}

// User statuses.
const (
	UserActive   uint8 = 1
	UserInactive uint8 = 2
)

// User is a user; Permissions is nil when the user has none (or they were not asked for).
type User struct {
	ID          uint32
	CreatedAt   uint64
	Status      uint8
	Username    string
	Permissions *Permissions
}

// Me describes the caller's own connection (GetMe).
type Me struct {
	ClientID       uint32
	UserID         uint32
	Transport      uint8
	Address        string
	ConsumerGroups []MeGroup
}

// MeGroup is one consumer group the connection is a member of.
type MeGroup struct{ StreamID, TopicID, GroupID uint32 }

// ClusterMetadata is the reply of GetClusterMetadata.
type ClusterMetadata struct {
	Name  string
	Nodes []ClusterNode
}

// ClusterNode is one node of the cluster.
type ClusterNode struct {
	Name                                string
	IP                                  string
	TCPPort, QUICPort, HTTPPort, WSPort uint16
	Role                                uint8 // NodeRoleLeader or NodeRoleFollower
	Status                              uint8 // NodeStatusHealthy, ...
}

// ClusterNode roles and statuses (iggy_common ClusterNodeRole, ClusterNodeStatus).
const (
	NodeRoleLeader   uint8 = 0
	NodeRoleFollower uint8 = 1

	NodeStatusHealthy     uint8 = 0
	NodeStatusStarting    uint8 = 1
	NodeStatusStopping    uint8 = 2
	NodeStatusUnreachable uint8 = 3
	NodeStatusMaintenance uint8 = 4
	NodeStatusUnknown     uint8 = 5
)

// PersonalAccessToken is one entry of GetPATs.
type PersonalAccessToken struct {
	Name     string
	ExpiryAt uint64 // µs; 0 = never
}
