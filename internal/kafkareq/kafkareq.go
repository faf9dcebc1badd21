// Package kafkareq holds what the Kafka API handlers (internal/broker) and the data plane
// (internal/dataplane) both need of a request's fields: its timeout, and the names it repeats.
package kafkareq

import (
	"context"
	"time"
)

// Context bounds a request that carries a timeout (CreateTopics, DeleteTopics,
// CreatePartitions) by it; what is not done by then get REQUEST_TIMED_OUT. Without a positive
// timeout the Iggy client's own request timeout applies.
func Context(ctx context.Context, timeoutMillis int32) (context.Context, context.CancelFunc) {
	if timeoutMillis <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Duration(timeoutMillis)*time.Millisecond)
}

// Repeated returns the names that occur more than once among n items, where name(i) is the
// name of item i.
func Repeated[K comparable](n int, name func(i int) K) map[K]bool {
	seen := make(map[K]bool, n)
	var dup map[K]bool
	for i := 0; i < n; i++ {
		s := name(i)
		if seen[s] {
			if dup == nil {
				dup = make(map[K]bool)
			}
			dup[s] = true
		}
		seen[s] = true
	}
	return dup
}
