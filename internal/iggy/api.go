package iggy

import "context"

// API is every command the gateway uses. *Client (a pool) and *Conn (one connection) both
// implement it. Gateway code depends on narrow subsets of it so it can be faked in unit tests.
//
// Not-found conventions: GetStream/GetTopic/GetConsumerGroup/GetUser return an *Error with the
// matching not-found code (e.g. 1009/1010, 2010/2011, 5000/5003) when Iggy answers with an empty
// body; GetConsumerOffset returns (nil, nil) when no offset is stored.
type API interface {
	Ping(ctx context.Context) error
	GetMe(ctx context.Context) (*Me, error)
	GetClusterMetadata(ctx context.Context) (*ClusterMetadata, error)

	GetStream(ctx context.Context, stream Identifier) (*Stream, error)
	GetStreams(ctx context.Context) ([]Stream, error)
	CreateStream(ctx context.Context, name string) (*Stream, error)
	DeleteStream(ctx context.Context, stream Identifier) error

	GetTopic(ctx context.Context, stream, topic Identifier) (*Topic, error)
	GetTopics(ctx context.Context, stream Identifier) ([]Topic, error)
	CreateTopic(ctx context.Context, stream Identifier, name string, partitions uint32, opts TopicOptions) (*Topic, error)
	UpdateTopic(ctx context.Context, stream, topic Identifier, name string, opts TopicOptions) error
	DeleteTopic(ctx context.Context, stream, topic Identifier) error
	PurgeTopic(ctx context.Context, stream, topic Identifier) error

	CreatePartitions(ctx context.Context, stream, topic Identifier, count uint32) error
	DeletePartitions(ctx context.Context, stream, topic Identifier, count uint32) error

	// SendMessages sends msgs to one partition as one canonical batch.
	SendMessages(ctx context.Context, stream, topic Identifier, partition uint32, msgs []Message) (SendConfirmation, error)
	// SendBatch sends a batch built with NewBatch; it lets callers encode messages straight
	// into the outgoing frame.
	SendBatch(ctx context.Context, stream, topic Identifier, partition uint32, b *Batch) (SendConfirmation, error)
	PollMessages(ctx context.Context, req PollRequest) (*Polled, error)

	GetConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition *uint32) (*ConsumerOffset, error)
	StoreConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition *uint32, offset uint64) error
	DeleteConsumerOffset(ctx context.Context, consumer Consumer, stream, topic Identifier, partition *uint32) error

	CreateConsumerGroup(ctx context.Context, stream, topic Identifier, name string) (*ConsumerGroup, error)
	GetConsumerGroup(ctx context.Context, stream, topic, group Identifier) (*ConsumerGroup, error)
	GetConsumerGroups(ctx context.Context, stream, topic Identifier) ([]ConsumerGroup, error)
	DeleteConsumerGroup(ctx context.Context, stream, topic, group Identifier) error
	JoinConsumerGroup(ctx context.Context, stream, topic, group Identifier) error
	LeaveConsumerGroup(ctx context.Context, stream, topic, group Identifier) error
	SyncConsumerGroup(ctx context.Context, stream, topic, group Identifier) (*GroupAssignment, error)

	GetUser(ctx context.Context, user Identifier) (*User, error)
	GetUsers(ctx context.Context) ([]User, error)
	CreateUser(ctx context.Context, username, password string, status uint8, perms *Permissions) (*User, error)
	DeleteUser(ctx context.Context, user Identifier) error
	UpdatePermissions(ctx context.Context, user Identifier, perms *Permissions) error
	ChangePassword(ctx context.Context, user Identifier, current, next string) error

	CreatePAT(ctx context.Context, name string, expiryMicros uint64) (string, error)
	GetPATs(ctx context.Context) ([]PersonalAccessToken, error)
	DeletePAT(ctx context.Context, name string) error
}
