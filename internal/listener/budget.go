package listener

import (
	"context"
	"net"
	"sync"
	"time"
)

// Budget bounds the request memory held at once across every connection that shares it
// (MAX_REQUEST_MEMORY, docs/LIMITS.md): frame bytes as they arrive, the estimated size of
// the decoded request, what handlers reserve for their answers (Reserve) and the encoded
// response. A connection that cannot get memory for its next bytes stops reading until
// earlier requests are answered, which slows clients down (TCP back-pressure) instead of
// growing memory. Waiters are served in arrival order, so a large frame is not starved by a
// stream of small ones.
//
// With a per-address share (SetAddressShare), the connections of one peer address together
// hold at most that many bytes: one peer cannot take the whole budget from the others.
type Budget struct {
	mu      sync.Mutex
	max     int64
	avail   int64
	waiters []*budgetWaiter

	share int64                  // per-address bytes; 0: no per-address bound
	addrs map[string]*addrBudget // live per-address budgets, by peer address
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

// addrBudget is one peer address's share, alive while the address has connections.
type addrBudget struct {
	*Budget
	conns int
}

// NewBudget returns a budget of max bytes.
func NewBudget(max int64) *Budget { return &Budget{max: max, avail: max} }

// SetAddressShare bounds the bytes the connections of one peer address hold together; 0
// (or a share of at least the whole budget) removes the bound. Call it before serving.
func (b *Budget) SetAddressShare(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n <= 0 || n >= b.max {
		n = 0
	}
	b.share = n
}

// Usage returns the bytes held by requests and the budget's size, for metrics.
func (b *Budget) Usage() (inUse, limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.max - b.avail, b.max
}

// clamp lets a request larger than the whole budget through alone instead of never.
func (b *Budget) clamp(n int64) int64 { return min(n, b.max) }

// acquire takes n bytes, waiting while they are not available. It gives up (false) when stop
// is closed or expire fires (either may be nil).
func (b *Budget) acquire(n int64, stop <-chan struct{}, expire <-chan time.Time) bool {
	n = b.clamp(n)
	if n <= 0 {
		return true
	}
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
	case <-expire:
	}
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

// tryAcquire takes up to n bytes without waiting and returns how many it took.
func (b *Budget) tryAcquire(n int64) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) > 0 || b.avail <= 0 {
		return 0
	}
	n = min(n, b.avail)
	b.avail -= n
	return n
}

// charge takes n bytes at once, even past the budget: for memory that is already in use
// (a decoded request, a built response), so that later requests wait until it is freed.
func (b *Budget) charge(n int64) {
	b.mu.Lock()
	b.avail -= n
	b.mu.Unlock()
}

// release returns n bytes taken by acquire, tryAcquire or charge.
func (b *Budget) release(n int64) {
	if n <= 0 {
		return
	}
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

// account is one connection's view of the budget: the process-wide budget and the share of
// its peer address.
type account struct {
	global *Budget
	addr   *addrBudget // nil without a per-address share
	key    string
}

// openAccount returns the account of a connection from addr; close it when the connection
// ends. A nil budget gives a nil account, which holds nothing.
func (b *Budget) openAccount(addr string) *account {
	if b == nil {
		return nil
	}
	a := &account{global: b, key: addr}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.share > 0 {
		if b.addrs == nil {
			b.addrs = map[string]*addrBudget{}
		}
		ab := b.addrs[addr]
		if ab == nil {
			ab = &addrBudget{Budget: NewBudget(b.share)}
			b.addrs[addr] = ab
		}
		ab.conns++
		a.addr = ab
	}
	return a
}

func (a *account) close() {
	if a == nil || a.addr == nil {
		return
	}
	b := a.global
	b.mu.Lock()
	defer b.mu.Unlock()
	if a.addr.conns--; a.addr.conns == 0 {
		delete(b.addrs, a.key)
	}
}

// reservation is the memory one request holds, taken from its connection's address share
// and from the process budget alike; close returns it.
type reservation struct {
	acct *account
	mu   sync.Mutex
	n    int64
}

// limit is the most one request may hold: the smaller of the budget and the address share.
// A request that would need more gets that much and runs alone (Budget.clamp).
func (r *reservation) limit() int64 {
	if r.acct.addr != nil {
		return min(r.acct.global.max, r.acct.addr.max)
	}
	return r.acct.global.max
}

// growTo makes the request hold total bytes (at most limit), waiting for the address share
// first and then for the process budget. It gives up (false) when stop is closed or expire
// fires.
func (r *reservation) growTo(total int64, stop <-chan struct{}, expire <-chan time.Time) bool {
	if r == nil || r.acct == nil {
		return true
	}
	n := min(total, r.limit()) - r.held()
	if n <= 0 {
		return true
	}
	a := r.acct
	if a.addr != nil && !a.addr.acquire(n, stop, expire) {
		return false
	}
	if !a.global.acquire(n, stop, expire) {
		if a.addr != nil {
			a.addr.release(n)
		}
		return false
	}
	r.add(n)
	return true
}

// tryGrow takes up to n more bytes without waiting and returns how many it took.
func (r *reservation) tryGrow(n int64) int64 {
	if r == nil || r.acct == nil || n <= 0 {
		return max(n, 0)
	}
	a := r.acct
	if a.addr != nil {
		n = a.addr.tryAcquire(n)
	}
	got := a.global.tryAcquire(n)
	if a.addr != nil {
		a.addr.release(n - got)
	}
	r.add(got)
	return got
}

// charge records n bytes already in use without waiting (Budget.charge).
func (r *reservation) charge(n int64) {
	if r == nil || r.acct == nil || n <= 0 {
		return
	}
	r.acct.global.charge(n)
	if r.acct.addr != nil {
		r.acct.addr.charge(n)
	}
	r.add(n)
}

// shrinkTo gives back what the request holds beyond n bytes.
func (r *reservation) shrinkTo(n int64) {
	if r == nil || r.acct == nil {
		return
	}
	r.mu.Lock()
	give := max(r.n-n, 0)
	r.n -= give
	r.mu.Unlock()
	r.acct.global.release(give)
	if r.acct.addr != nil {
		r.acct.addr.release(give)
	}
}

// held is what the request holds.
func (r *reservation) held() int64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// close gives everything back.
func (r *reservation) close() { r.shrinkTo(0) }

func (r *reservation) add(n int64) {
	r.mu.Lock()
	r.n += n
	r.mu.Unlock()
}

// Reserve makes the request being served in ctx hold n more bytes of request memory until its
// response is written, waiting while they are not available (docs/LIMITS.md). A handler
// reserves before it reads or builds something large (Fetch: before reading from Iggy); the
// response's own size then counts only beyond what was reserved. It fails with ctx's error.
// Outside a listener request (or without a budget) it returns nil at once.
func Reserve(ctx context.Context, n int64) error {
	sl, ok := ctx.Value(slotKey{}).(*slot)
	if !ok || n <= 0 {
		return nil
	}
	before := sl.mem.held()
	if !sl.mem.growTo(before+n, ctx.Done(), nil) {
		return ctx.Err()
	}
	sl.reserved.Add(sl.mem.held() - before)
	return nil
}

// ReserveUpTo is Reserve without waiting: it takes up to n bytes, as many as are available
// now, and returns how many (n outside a listener request or without a budget). A Fetch
// answers with less data rather than wait for memory it could take from others.
func ReserveUpTo(ctx context.Context, n int64) int64 {
	sl, ok := ctx.Value(slotKey{}).(*slot)
	if !ok || sl.mem == nil || sl.mem.acct == nil {
		return n
	}
	got := sl.mem.tryGrow(n)
	sl.reserved.Add(got)
	return got
}

// Unreserve gives back up to n bytes of what Reserve and ReserveUpTo took for the request
// being served in ctx, for a handler that reserved more than it turned out to need before it
// waits (a long-polling Fetch holds only what it read while it waits, so that it does not keep
// other requests of its address waiting for memory it is not using, docs/LIMITS.md).
func Unreserve(ctx context.Context, n int64) {
	sl, ok := ctx.Value(slotKey{}).(*slot)
	if !ok || sl.mem == nil || sl.mem.acct == nil || n <= 0 {
		return
	}
	n = min(n, sl.reserved.Load())
	sl.mem.shrinkTo(sl.mem.held() - n)
	sl.reserved.Add(-n)
}

// peerHost is the address key of per-address limits: the peer's IP without its port.
func peerHost(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	if a == nil {
		return ""
	}
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}
