package gateway

import (
	"context"
	"log/slog"
	"slices"

	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// maxNamedWeakTopics bounds the topic names the startup scan lists in its log line.
const maxNamedWeakTopics = 20

// warnBufferedTopics lists the topics of the default stream (one GetTopics call) and logs one
// WARN naming those whose flush options keep acknowledged writes in Iggy's memory, so that
// topics created by an older gateway are noticed at startup (docs/DURABILITY.md §3). A
// failure only costs the warning.
func warnBufferedTopics(ctx context.Context, api interface {
	GetTopics(context.Context, iggy.Identifier) ([]iggy.Topic, error)
}, stream string, log *slog.Logger) {
	topics, err := api.GetTopics(ctx, iggy.Name(stream))
	if err != nil {
		log.Debug("scanning topic flush options failed", "iggy_stream", stream, "err", err)
		return
	}
	var names []string
	count := 0
	for i := range topics {
		if f := durability.Of(&topics[i]); f.Known && !f.WritesEachAck() {
			count++
			if len(names) < maxNamedWeakTopics {
				names = append(names, topics[i].Name)
			}
		}
	}
	if count > 0 {
		slices.Sort(names)
		log.Warn("Iggy topics buffer acknowledged writes in Iggy's memory: an Iggy crash can lose them. "+durability.Fix,
			"iggy_stream", stream, "count", count, "topics", names)
	}
}
