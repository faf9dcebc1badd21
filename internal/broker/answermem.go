package broker

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// answerMemory reserves the pieces of an answer that can be many times larger than its
// request (a topic's partitions, a resource's configs, a group's members and offsets) as a
// handler builds them, so the answer grows inside the request memory budget
// (listener.ReserveAnswer, docs/LIMITS.md). Once a piece does not fit what one request may
// hold, it and every later piece are answered with tooLargeCode instead of being built.
type answerMemory struct {
	ctx      context.Context
	tooLarge bool
}

func newAnswerMemory(ctx context.Context) *answerMemory { return &answerMemory{ctx: ctx} }

// tooLargeCode is the error of the pieces of an answer past what one request may hold:
// asking again the same way cannot succeed, as for a request Kafka finds invalid.
var tooLargeCode = kerr.InvalidRequest

const tooLargeMessage = "answer larger than the gateway's request memory (MAX_REQUEST_MEMORY): ask for fewer resources per request"

// take reserves part, just built. It reports false when part does not fit (nothing is
// reserved then; the handler answers this piece and the rest with tooLargeCode). Other
// failures (memory not available in time, request cancelled) are returned: the handler fails
// the request, which closes the connection, and the client retries.
func (m *answerMemory) take(part any) (bool, error) {
	if m.tooLarge {
		return false, nil
	}
	err := listener.ReserveAnswer(m.ctx, part)
	if errors.Is(err, listener.ErrAnswerTooLarge) {
		m.tooLarge = true
		return false, nil
	}
	return err == nil, err
}
