// Package keylock serialises work per key (a topic, a partition) instead of under one global
// lock: a request that waits on a slow Iggy round trip for one key holds up only the requests
// for that key, never those of other topics or partitions (issue 25, "no lock held across an
// Iggy round trip on any request path").
package keylock

import (
	"context"
	"sync"
)

// Locks is a set of mutexes, one per key in use; the zero value is ready to use. A key's
// mutex exists while it is held or waited for, so the set stays as small as the work in
// progress.
type Locks[K comparable] struct {
	mu   sync.Mutex
	keys map[K]*entry
}

type entry struct {
	held chan struct{} // one slot: full while the key is held
	refs int           // holders and waiters; guarded by Locks.mu
}

// Lock waits until key is free or ctx ends; on success it returns the function that frees
// key, which must be called exactly once.
func (l *Locks[K]) Lock(ctx context.Context, key K) (unlock func(), err error) {
	l.mu.Lock()
	e := l.keys[key]
	if e == nil {
		if l.keys == nil {
			l.keys = make(map[K]*entry)
		}
		e = &entry{held: make(chan struct{}, 1)}
		l.keys[key] = e
	}
	e.refs++
	l.mu.Unlock()
	select {
	case e.held <- struct{}{}:
		return func() { <-e.held; l.release(key, e) }, nil
	case <-ctx.Done():
		l.release(key, e)
		return nil, ctx.Err()
	}
}

func (l *Locks[K]) release(key K, e *entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.refs--; e.refs == 0 {
		delete(l.keys, key)
	}
}

// Len is how many keys are held or waited for.
func (l *Locks[K]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}
