package broker

import (
	"context"

	"github.com/iggygw/iggy-gateway-kafka/internal/dataplane"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// Storage is what the handlers need of Iggy: topics and their partitions, and what the data
// plane needs. *iggy.Client implements it.
type Storage interface {
	GetTopic(ctx context.Context, stream, topic iggy.Identifier) (*iggy.Topic, error)
	GetTopics(ctx context.Context, stream iggy.Identifier) ([]iggy.Topic, error)
	iggy.StreamEnsurer // creating a missing stream on CreateTopics
	CreateTopic(ctx context.Context, stream iggy.Identifier, name string, partitions uint32, opts iggy.TopicOptions) (*iggy.Topic, error)
	UpdateTopic(ctx context.Context, stream, topic iggy.Identifier, name string, opts iggy.TopicOptions) error
	DeleteTopic(ctx context.Context, stream, topic iggy.Identifier) error
	CreatePartitions(ctx context.Context, stream, topic iggy.Identifier, count uint32) error
	dataplane.Storage // the data plane's reads and writes
}

var _ Storage = (*iggy.Client)(nil)

// storage is the Storage a request of connection cc reaches Iggy through; cc is nil for the
// gateway's own reads (the topic cache, the offset probes of waiting fetches), which are not
// made on behalf of one client. Every Iggy call of a handler goes through it. Nil when the
// bridge is off. Every client shares the gateway's Iggy connections (the bridge account):
// what an identified principal may do is decided before the handler runs (internal/authorize).
func (b *Broker) storage(cc *listener.ConnContext) Storage {
	return b.iggy
}
