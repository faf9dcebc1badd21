package authz

import (
	"context"
	"sync"
	"time"
)

// DefaultRefresh is how long a snapshot is trusted when the setting is not given.
const DefaultRefresh = 10 * time.Second

// minReload spaces the reloads that denials and Iggy permission errors ask for, so a client
// repeating a denied request cannot turn each one into Iggy lookups.
const minReload = time.Second

// Cache holds one Grants snapshot per user. A snapshot older than the refresh interval is read
// again before it is used, so a permission changed in Iggy takes effect within the interval
// (plus the time of one load). Stale marks a snapshot for reading again at once (at most once
// a second): after a denial, so that a permission just granted works on the client's retry,
// and after Iggy refused something as unauthorized.
type Cache struct {
	src     Source
	refresh time.Duration
	now     func() time.Time

	mu    sync.Mutex
	users map[string]*entry
}

type entry struct {
	mu     sync.Mutex // held while loading, so concurrent requests of a user share one load
	grants *Grants
	stale  bool
	bound  bindings // the topics the user's per-topic permissions were first seen naming
}

// NewCache returns a cache reading from src; refresh ≤ 0 means DefaultRefresh.
func NewCache(src Source, refresh time.Duration) *Cache {
	if refresh <= 0 {
		refresh = DefaultRefresh
	}
	return &Cache{src: src, refresh: refresh, now: time.Now, users: map[string]*entry{}}
}

// Refresh is the interval after which a snapshot is read again.
func (c *Cache) Refresh() time.Duration { return c.refresh }

// Grants returns user's current permissions, reading them from Iggy when the snapshot is
// missing, older than the refresh interval, or marked stale. A failed read returns the error
// (callers deny): a snapshot is never used past its interval.
func (c *Cache) Grants(ctx context.Context, user string) (*Grants, error) {
	e := c.entry(user)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := c.now()
	if g := e.grants; g != nil {
		age := now.Sub(g.Read)
		if age < c.refresh && (!e.stale || age < minReload) {
			return g, nil
		}
	}
	if e.bound == nil {
		e.bound = bindings{}
	}
	g, err := load(ctx, c.src, user, now, e.bound)
	if err != nil {
		return nil, err
	}
	e.grants, e.stale = g, false
	return g, nil
}

// Stale asks for user's permissions to be read again at its next request.
func (c *Cache) Stale(user string) {
	e := c.entry(user)
	e.mu.Lock()
	e.stale = true
	e.mu.Unlock()
}

func (c *Cache) entry(user string) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.users[user]
	if !ok {
		e = &entry{}
		c.users[user] = e
	}
	return e
}
