package iggy

import "context"

// API is the set of Iggy commands the gateway's production code sends: the union of the narrow
// interfaces its packages declare (broker.Storage, authz.Source, the Iggy-backed logs,
// membership's session) and the gateway's own probes. *Client (a pool) and *Conn (one
// connection) both implement it. Fault-injecting test layers wrap it; a test that needs a
// command outside it (users, tokens, consumer offsets, deleting streams) uses the concrete
// *Client or *Conn.
//
// Not-found conventions: GetStream/GetTopic/GetUser return an *Error with the matching
// not-found code (e.g. 1009/1010, 2010/2011, 5000/5003) when Iggy answers with an empty body.
type API interface {
	Ping(ctx context.Context) error
	GetClusterMetadata(ctx context.Context) (*ClusterMetadata, error)

	GetStream(ctx context.Context, stream Identifier) (*Stream, error)
	CreateStream(ctx context.Context, name string) (*Stream, error)

	GetTopic(ctx context.Context, stream, topic Identifier) (*Topic, error)
	GetTopics(ctx context.Context, stream Identifier) ([]Topic, error)
	CreateTopic(ctx context.Context, stream Identifier, name string, partitions uint32, opts TopicOptions) (*Topic, error)
	UpdateTopic(ctx context.Context, stream, topic Identifier, name string, opts TopicOptions) error
	DeleteTopic(ctx context.Context, stream, topic Identifier) error
	CreatePartitions(ctx context.Context, stream, topic Identifier, count uint32) error

	// SendMessages sends msgs to one partition as one canonical batch.
	SendMessages(ctx context.Context, stream, topic Identifier, partition uint32, msgs []Message) (SendConfirmation, error)
	// SendBatch sends a batch built with NewBatch; it lets callers encode messages straight
	// into the outgoing frame.
	SendBatch(ctx context.Context, stream, topic Identifier, partition uint32, b *Batch) (SendConfirmation, error)
	PollMessages(ctx context.Context, req PollRequest) (*Polled, error)

	// internal/membership keeps gateway liveness in consumer groups of its own.
	CreateConsumerGroup(ctx context.Context, stream, topic Identifier, name string) (*ConsumerGroup, error)
	GetConsumerGroups(ctx context.Context, stream, topic Identifier) ([]ConsumerGroup, error)
	JoinConsumerGroup(ctx context.Context, stream, topic, group Identifier) error

	// GetUser reads a user's permissions (internal/authz, certificate identities).
	GetUser(ctx context.Context, user Identifier) (*User, error)
}
