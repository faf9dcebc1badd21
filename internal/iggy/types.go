package iggy

import "github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"

// The data types are defined in the wire package, which the client and the in-memory server
// share; they are re-exported here so gateway code only imports iggy.
type (
	// Identifier names a stream, topic, consumer group or user either by its numeric id
	// (0-based) or by its name (used when non-empty).
	Identifier = wire.Identifier
	// Stream is a stream as Iggy reports it.
	Stream = wire.Stream
	// Topic is a topic as Iggy reports it.
	Topic = wire.Topic
	// Partition is a partition as Iggy reports it. CurrentOffset is the offset of the last
	// message and is 0 for an empty partition: tell the two apart with MessagesCount (or use
	// HighWatermark).
	Partition = wire.Partition
	// TopicOptions are the options of CreateTopic and UpdateTopic. Zero values mean "server
	// default" on create and "unchanged" on update.
	TopicOptions = wire.TopicOptions
	// Message is a message to send. Headers is an encoded user-headers block (see
	// AppendHeader).
	Message = wire.Message
	// PolledMessage is one message returned by PollMessages. Payload and Headers alias the
	// reply buffer.
	PolledMessage = wire.PolledMessage
	// Polled is the reply of PollMessages.
	Polled = wire.Polled
	// FrameSizeError is wrapped by ErrReplyTooLarge failures: Size is what the reply declared,
	// over Limit.
	FrameSizeError = wire.FrameSizeError
	// Consumer identifies who polls or stores offsets.
	Consumer = wire.Consumer
	// PollingStrategy selects where a poll starts.
	PollingStrategy = wire.PollingStrategy
	// PollRequest is the input of PollMessages. A nil Partition means "unset".
	PollRequest = wire.PollRequest
	// SendConfirmation is Iggy's confirmation of a send.
	SendConfirmation = wire.SendConfirmation
	// ConsumerOffset is the reply of GetConsumerOffset.
	ConsumerOffset = wire.ConsumerOffset
	// ConsumerGroup is an Iggy consumer group.
	ConsumerGroup = wire.ConsumerGroup
	// ConsumerGroupMember is one member and its assigned partitions.
	ConsumerGroupMember = wire.ConsumerGroupMember
	// GroupAssignment is the reply of SyncConsumerGroup.
	GroupAssignment = wire.GroupAssignment
	// GlobalPermissions are a user's server-wide permissions.
	GlobalPermissions = wire.GlobalPermissions
	// StreamPermissions are a user's permissions on one stream.
	StreamPermissions = wire.StreamPermissions
	// TopicPermissions are a user's permissions on one topic.
	TopicPermissions = wire.TopicPermissions
	// Permissions are all of a user's permissions.
	Permissions = wire.Permissions
	// User is a user; Permissions is nil when the user has none (or they were not asked for).
	User = wire.User
	// Me describes the caller's own connection (GetMe).
	Me = wire.Me
	// MeGroup is one consumer group the connection is a member of.
	MeGroup = wire.MeGroup
	// ClusterMetadata is the reply of GetClusterMetadata.
	ClusterMetadata = wire.ClusterMetadata
	// ClusterNode is one node of the cluster.
	ClusterNode = wire.ClusterNode
	// PersonalAccessToken is one entry of GetPATs.
	PersonalAccessToken = wire.PersonalAccessToken
)

// ID returns a numeric identifier.
func ID(n uint32) Identifier { return Identifier{Numeric: n} }

// Name returns a string identifier.
func Name(s string) Identifier { return Identifier{Name: s} }

// Never is the value of MessageExpiry and MaxTopicSize that means "never expire" / "unlimited".
const Never = wire.Never

// Consumer kinds.
const (
	ConsumerKindConsumer = wire.ConsumerKindConsumer
	ConsumerKindGroup    = wire.ConsumerKindGroup
)

// Polling strategy kinds.
const (
	PollOffset    = wire.PollOffset
	PollTimestamp = wire.PollTimestamp
	PollFirst     = wire.PollFirst
	PollLast      = wire.PollLast
	PollNext      = wire.PollNext
)

// User statuses.
const (
	UserActive   = wire.UserActive
	UserInactive = wire.UserInactive
)
