package listener

import "sync"

// Budget bounds the bytes of request frames held in memory at once, across every connection
// that shares it. A connection that cannot get bytes for its next frame stops reading until
// earlier requests are answered, which slows clients down (TCP back-pressure) instead of
// growing memory. Waiters are served in arrival order, so a large frame is not starved by a
// stream of small ones.
type Budget struct {
	mu      sync.Mutex
	max     int64
	avail   int64
	waiters []*budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

// NewBudget returns a budget of max bytes.
func NewBudget(max int64) *Budget { return &Budget{max: max, avail: max} }

// Usage returns the bytes held by request frames and the budget's size, for metrics.
func (b *Budget) Usage() (inUse, limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.max - b.avail, b.max
}

// clamp lets a frame larger than the whole budget through alone instead of never.
func (b *Budget) clamp(n int64) int64 { return min(n, b.max) }

// acquire takes n bytes, waiting while they are not available. It gives up (false) when stop
// is closed.
func (b *Budget) acquire(n int64, stop <-chan struct{}) bool {
	n = b.clamp(n)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.avail >= n {
		b.avail -= n
		b.mu.Unlock()
		return true
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return true
	case <-stop:
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-w.ready: // granted meanwhile: give it back
			b.avail += n
			b.grant()
		default:
			for i, o := range b.waiters {
				if o == w {
					b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
					break
				}
			}
			b.grant() // the head may have changed
		}
		return false
	}
}

// release returns n bytes taken by acquire.
func (b *Budget) release(n int64) {
	n = b.clamp(n)
	b.mu.Lock()
	b.avail += n
	b.grant()
	b.mu.Unlock()
}

// grant wakes waiters from the head while their requests fit. Callers hold mu.
func (b *Budget) grant() {
	for len(b.waiters) > 0 && b.avail >= b.waiters[0].n {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.avail -= w.n
		close(w.ready)
	}
}
