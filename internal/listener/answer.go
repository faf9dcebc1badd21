package listener

import (
	"context"
	"errors"
	"reflect"
	"time"
)

// ErrAnswerTooLarge is ReserveAnswer's refusal of an answer that would make its request hold
// more than one request may (the smaller of MAX_REQUEST_MEMORY and
// MAX_REQUEST_MEMORY_PER_ADDRESS, docs/LIMITS.md): waiting would not help. The handler fails
// the request with it, which closes the connection. Answering the rest of the entries with
// an error instead would not bound the answer: an error entry can itself be dozens of times
// larger than a request entry of two bytes.
var ErrAnswerTooLarge = errors.New("answer larger than the request memory one request may hold (MAX_REQUEST_MEMORY, MAX_REQUEST_MEMORY_PER_ADDRESS)")

// ErrMemoryUnavailable is ReserveAnswer's refusal when the memory was not available within
// the read timeout: the handler fails the request, which closes the connection (clients
// reconnect and retry), so requests holding memory cannot wait on each other for good.
var ErrMemoryUnavailable = errors.New("request memory not available within the read timeout")

// ReserveAnswer makes the request served in ctx hold the memory of part, a piece of its
// answer the handler just built (one topic, resource or group), until the response is
// written. Handlers whose answers can be many times larger than their requests build them
// piece by piece (error entries too) and reserve each piece, so the answer grows inside the
// budget (docs/LIMITS.md): it waits while the memory is taken by others, and refuses with
// ErrAnswerTooLarge a piece that would take the request past what one request may hold,
// taking nothing. part is measured as the writer measures responses. Outside a listener request (or without a budget) it
// returns nil at once.
func ReserveAnswer(ctx context.Context, part any) error {
	sl, ok := ctx.Value(slotKey{}).(*slot)
	if !ok || sl.mem == nil || sl.mem.acct == nil || part == nil {
		return nil
	}
	v := reflect.ValueOf(part)
	return reserveAnswer(ctx, sl, int64(v.Type().Size())+sizeOf(v, true))
}

// ReserveAnswerBytes is ReserveAnswer for n bytes the handler is about to allocate for its
// answer or for state the answer keeps until it is written (arrays sized from the request,
// whose size it computes itself): reserve, then allocate.
func ReserveAnswerBytes(ctx context.Context, n int64) error {
	sl, ok := ctx.Value(slotKey{}).(*slot)
	if !ok || sl.mem == nil || sl.mem.acct == nil || n <= 0 {
		return nil
	}
	return reserveAnswer(ctx, sl, n)
}

func reserveAnswer(ctx context.Context, sl *slot, n int64) error {
	before := sl.mem.held()
	if before+n > sl.mem.limit() {
		return ErrAnswerTooLarge
	}
	timer := time.NewTimer(sl.answerWait)
	defer timer.Stop()
	if !sl.mem.growTo(before+n, ctx.Done(), timer.C) {
		if err := ctx.Err(); err != nil {
			return err
		}
		return ErrMemoryUnavailable
	}
	sl.reserved.Add(sl.mem.held() - before)
	return nil
}
