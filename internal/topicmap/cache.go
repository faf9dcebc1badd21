package topicmap

import (
	"context"
	"sync"
	"time"
)

// LookupFunc asks Iggy for an existing topic and returns its numeric id, partition count and
// creation time. Its errors (including Iggy's "not found") are returned by Cache.Resolve
// unchanged.
type LookupFunc func(ctx context.Context, t Target) (topicID, partitions uint32, createdAt uint64, err error)

// Resolved is a Kafka topic resolved to an existing Iggy topic.
type Resolved struct {
	Kafka      string
	Target     Target
	TopicID    uint32 // Iggy's numeric id, for logs and for telling a recreated topic apart
	Partitions uint32
	// CreatedAt is Iggy's creation time of the topic (µs): with the id, what tells a topic
	// deleted and created again under the same name apart (Iggy may reuse the id).
	CreatedAt uint64
}

// DefaultTTL bounds how long a resolution is trusted. Admin operations through the gateway
// invalidate at once; the TTL is what makes changes made by native Iggy tools (new partitions,
// a deleted and recreated topic) visible without a restart.
const DefaultTTL = 30 * time.Second

// Cache resolves Kafka topics to Iggy topics and remembers the answers. Missing topics are not
// cached, so a topic created elsewhere is found on the next request.
type Cache struct {
	m      *Map
	lookup LookupFunc
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]cacheEntry
}

type cacheEntry struct {
	r       Resolved
	expires time.Time
}

// NewCache returns a cache over m that calls lookup on misses. ttl ≤ 0 means DefaultTTL.
func NewCache(m *Map, lookup LookupFunc, ttl time.Duration) *Cache {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Cache{m: m, lookup: lookup, ttl: ttl, now: time.Now, entries: make(map[string]cacheEntry)}
}

// Map returns the naming rule.
func (c *Cache) Map() *Map { return c.m }

// Resolve returns the Iggy topic behind kafkaTopic, or the lookup's error. Callers should
// address the Iggy topic by name (Target): names, unlike numeric ids, stay valid when a topic
// is deleted and recreated behind the cache's back.
func (c *Cache) Resolve(ctx context.Context, kafkaTopic string) (Resolved, error) {
	c.mu.Lock()
	e, ok := c.entries[kafkaTopic]
	c.mu.Unlock()
	if ok && c.now().Before(e.expires) {
		return e.r, nil
	}
	t := c.m.Resolve(kafkaTopic)
	id, partitions, createdAt, err := c.lookup(ctx, t)
	if err != nil {
		c.Invalidate(kafkaTopic)
		return Resolved{}, err
	}
	r := Resolved{Kafka: kafkaTopic, Target: t, TopicID: id, Partitions: partitions, CreatedAt: createdAt}
	c.Store(r)
	return r, nil
}

// Store records a resolution, for example right after the gateway created the topic.
func (c *Cache) Store(r Resolved) {
	c.mu.Lock()
	c.entries[r.Kafka] = cacheEntry{r: r, expires: c.now().Add(c.ttl)}
	c.mu.Unlock()
}

// Invalidate forgets kafkaTopic: call it after deleting or altering the topic, or when Iggy
// answers "not found" for a cached id.
func (c *Cache) Invalidate(kafkaTopic string) {
	c.mu.Lock()
	delete(c.entries, kafkaTopic)
	c.mu.Unlock()
}

// InvalidateAll forgets everything (for example after a stream was deleted).
func (c *Cache) InvalidateAll() {
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}
