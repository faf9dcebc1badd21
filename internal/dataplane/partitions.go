package dataplane

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/mapping"
	"github.com/iggygw/iggy-gateway-kafka/internal/producers"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
	"github.com/iggygw/iggy-gateway-kafka/internal/topicmap"
)

// What the data plane remembers about partitions between requests: the last high watermark
// seen, the log start offset, the Iggy topic the partition belongs to, the recent stored
// message and record sizes, the fetches waiting for new data; and, for Produce, the send lanes
// and decode slots. Iggy stays the source of truth: offsets come from Iggy's answers and
// confirmations, and a Fetch answered from known offsets (within knownTopicTTL of Iggy last
// confirming the topic) or from the tail cache serves only what Iggy confirmed; the rest of
// this state decides when to read and how much to ask for.

const (
	// probeInterval is how often a topic that long-polling fetches wait on is asked for its
	// partitions' offsets, so writes by native Iggy clients wake them promptly. Writes through
	// this gateway wake them at once.
	probeInterval = 150 * time.Millisecond
	probeTimeout  = time.Second
	// logStartTTL is how long a polled log start offset is trusted. It moves only when Iggy
	// deletes expired segments or a topic is purged.
	logStartTTL = 10 * time.Second
	// corruptLogLimit bounds the memory of "logged once per connection" corrupt messages.
	corruptLogLimit = 4096
	// maxPartStates bounds how many partitions state is kept for. State is kept only for
	// partitions Iggy confirmed, so the bound is met only with that many real partitions in
	// use; past it, partitions without a kept state are served as well, just without what an
	// earlier request learnt about them.
	maxPartStates = 1 << 16
	// partIdleTTL: the state of a partition no request used for that long is dropped.
	partIdleTTL = 5 * time.Minute
	// partMinAge protects state from being dropped to make room: a fetch takes the state of
	// its partitions and starts waiting on it (which protects it) within one read pass.
	partMinAge = 4 * fetchReadTimeout
	// fullSweepInterval spaces the sweeps that make room once the bound is met.
	fullSweepInterval = time.Second
)

// dataConsumer is the plain consumer (kind 1) the gateway polls with. It never stores offsets
// (auto-commit is off), so its id only names the gateway in Iggy's logs.
var dataConsumer = iggy.Consumer{Kind: iggy.ConsumerKindConsumer, ID: iggy.Name("iggy-gateway-kafka")}

// partKey names one Iggy partition. Names rather than numeric ids, like the topic cache: they
// stay meaningful when a topic is deleted and recreated.
type partKey struct {
	topicmap.Target
	Partition uint32
}

func (k partKey) pollRequest(strategy iggy.PollingStrategy, count uint32) iggy.PollRequest {
	p := k.Partition
	return iggy.PollRequest{
		Consumer: dataConsumer, Stream: iggy.Name(k.Stream), Topic: iggy.Name(k.Topic),
		Partition: &p, Strategy: strategy, Count: count,
	}
}

// partitions is the Broker's data-path state. The zero value is ready to use.
type partitions struct {
	mu      sync.Mutex
	parts   map[partKey]*partState
	swept   time.Time        // when parts was last swept of idle state
	clock   func() time.Time // nil: time.Now (tests set it)
	probes  map[topicmap.Target]*probe
	corrupt map[corruptKey]struct{}
	pastEnd map[partKey]uint64 // high watermark at which a committed offset past it was logged
	decodes chan struct{}      // one token per Produce request decoding its records
	lanes   map[laneKey]*sendTurn
}

// laneKey names a lane: writes to one partition that must reach it in the order they were
// queued. laneOf decides which writes share a lane.
type laneKey struct {
	conn     uint64
	producer int64 // -1 for a lane of a connection
	part     partKey
}

// laneOf is the lane of a write of connection cc to partition k: the connection's writes to
// the partition, kept in request order (the listener starts Produce requests in order).
// Writes of different connections are not ordered with each other, as in Kafka. An idempotent
// batch (prod not nil) goes on its producer's lane of the partition instead, whatever
// connection carries it: a retry on a new connection, or pipelined requests, are then checked
// in the order the producer sent them (docs/IDEMPOTENCE.md §2). This is the one place that
// decides it.
func laneOf(cc *listener.ConnContext, k partKey, prod *producers.Batch) laneKey {
	if prod != nil {
		return laneKey{producer: prod.ProducerID, part: k}
	}
	return laneKey{conn: cc.ID, producer: -1, part: k}
}

// sendTurn is one send's place on its lane: the sends on a lane are made one after the other,
// in the order they were queued. A lane exists while it has sends queued.
type sendTurn struct {
	d    *partitions
	key  laneKey
	prev chan struct{} // closed when the previous send on the lane is done
	done chan struct{}
}

// queueSend queues a send on lane key behind the ones queued before. The caller must call
// finish on the turn once the send is done (or given up).
func (d *partitions) queueSend(key laneKey) *sendTurn {
	t := &sendTurn{d: d, key: key, prev: noWait, done: make(chan struct{})}
	d.mu.Lock()
	defer d.mu.Unlock()
	if last := d.lanes[key]; last != nil {
		t.prev = last.done
	}
	if d.lanes == nil {
		d.lanes = make(map[laneKey]*sendTurn)
	}
	d.lanes[key] = t
	return t
}

var noWait = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// wait returns when every send queued before this one on its lane is done.
func (t *sendTurn) wait() { <-t.prev }

// finish lets the next send on the lane go, and drops the lane when this was its last send.
func (t *sendTurn) finish() {
	close(t.done)
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	if t.d.lanes[t.key] == t {
		delete(t.d.lanes, t.key)
	}
}

// acquireDecode waits for one of a bounded number of Produce decode slots (at least 4, one
// per CPU on larger machines) and returns its release function, or ctx's error.
func (d *partitions) acquireDecode(ctx context.Context) (release func(), err error) {
	d.mu.Lock()
	if d.decodes == nil {
		d.decodes = make(chan struct{}, max(4, runtime.GOMAXPROCS(0)))
	}
	slots := d.decodes
	d.mu.Unlock()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// partState is what is known about one partition.
type partState struct {
	lastUse time.Time // guarded by partitions.mu

	mu        sync.Mutex
	hw        uint64 // high watermark last seen or written
	createdAt uint64 // Iggy's creation time of the partition; another one is a new partition
	sizeBytes uint64 // Iggy's size of the partition when hw was last read from Iggy
	// lowWrite is the lowest offset written through this gateway below the then known high
	// watermark since Iggy's offsets were last read or the Iggy client last reconnected
	// (wrote tells whether there was such a write):
	// after a truncation, writes that landed before it was noticed start where the log
	// diverged (truncation.go).
	lowWrite      uint64
	wrote         bool
	logStart      uint64
	logStartUntil time.Time // logStart is trusted until then
	avgSize       int       // bytes of payload and headers per message recently; 0 unknown
	recordSize    int       // bytes per record in the Kafka batches Fetch built recently; 0 unknown
	waiters       map[*waiter]struct{}
	// topicID and topicCreated identify the partition's topic as last resolved (when
	// topicKnown), so that a Fetch answered from known offsets finds the topic's stored rules,
	// and a topic deleted and created again under the same name is told from a truncation.
	topicID      uint32
	topicCreated uint64
	topicKnown   bool
	// topicRead is when Iggy last confirmed the topic's identity (a read of the topic, not a
	// write): known offsets are trusted for knownTopicTTL after it (fetch.go, resolveKnown).
	topicRead time.Time
}

// knownTopicTTL is how long a Fetch may be answered from known offsets without asking Iggy
// whether the topic is still the one they belong to: a topic deleted and created again by a
// native Iggy client is noticed within it.
const knownTopicTTL = time.Second

// waiter is one waiting fetch; it is woken when any partition it watches gets new data.
type waiter struct{ ch chan struct{} }

func newWaiter() *waiter { return &waiter{ch: make(chan struct{}, 1)} }

func (w *waiter) wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// part returns the state of k, creating it on first use. Callers pass only partitions Iggy
// confirmed exists: state is kept between requests, and requests naming partitions that do
// not exist must not add to it.
func (d *partitions) part(k partKey) *partState {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.parts[k]; st != nil {
		st.lastUse = now
		return st
	}
	if d.parts == nil {
		d.parts = make(map[partKey]*partState)
		d.swept = now
	}
	if now.Sub(d.swept) >= partIdleTTL || (len(d.parts) >= maxPartStates && now.Sub(d.swept) >= fullSweepInterval) {
		d.sweepLocked(now)
	}
	st := &partState{lastUse: now}
	if len(d.parts) < maxPartStates {
		d.parts[k] = st
	}
	return st
}

// known returns the state of k when there is one, without creating it.
func (d *partitions) known(k partKey) *partState {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.parts[k]
	if st != nil {
		st.lastUse = now
	}
	return st
}

// knownPartition is the partition as last seen or written, in GetTopic's form, and the id of
// its topic, when both are known and Iggy confirmed the topic within knownTopicTTL of now.
func (s *partState) knownPartition(id uint32, now time.Time) (iggy.Partition, uint32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hw == 0 || !s.topicKnown || now.Sub(s.topicRead) >= knownTopicTTL {
		return iggy.Partition{}, 0, false
	}
	return iggy.Partition{ID: id, CurrentOffset: s.hw - 1, MessagesCount: s.hw, SizeBytes: s.sizeBytes}, s.topicID, true
}

// noteTopic records which Iggy topic the partition belongs to (its id and creation time), and
// reports whether it is another topic than the one noted before: one deleted and created
// again under the same name. Then what is known of the old one's offsets is forgotten, so that
// the new one's lower offsets are not taken for a truncation.
func (s *partState) noteTopic(id uint32, created uint64, read time.Time) (replaced bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !read.IsZero() {
		s.topicRead = read
	}
	replaced = s.topicKnown && (s.topicID != id || s.topicCreated != created)
	if replaced {
		s.createdAt, s.hw, s.sizeBytes, s.wrote = 0, 0, 0, false
		s.logStartUntil = time.Time{}
		s.wakeLocked()
	}
	s.topicID, s.topicCreated, s.topicKnown = id, created, true
	return replaced
}

// noteTopic records the Iggy topic (id, creation time) of partition k, read from Iggy at read
// (zero: known from a resolution that may be older, as a Produce's); a topic created again
// under the same name also drops the old one's batches from the tail cache.
func (dp *Plane) noteTopic(k partKey, st *partState, id uint32, created uint64, read time.Time) {
	if st.noteTopic(id, created, read) {
		dp.tail.Invalidate(tailKey(k))
	}
}

// noteTopicOf records topic as the Iggy topic of t's partitions the gateway keeps state for.
func (dp *Plane) noteTopicOf(t topicmap.Target, topic *iggy.Topic) {
	for i := range topic.Partitions {
		k := partKey{Target: t, Partition: topic.Partitions[i].ID}
		if st := dp.data.known(k); st != nil {
			dp.noteTopic(k, st, topic.ID, topic.CreatedAt, dp.data.now())
		}
	}
}

func (d *partitions) now() time.Time {
	if d.clock != nil {
		return d.clock()
	}
	return time.Now()
}

// sweepLocked drops the state of partitions idle for partIdleTTL and, while the bound is met,
// of those idle for partMinAge. State that fetches wait on is kept.
func (d *partitions) sweepLocked(now time.Time) {
	d.swept = now
	for _, idle := range []time.Duration{partIdleTTL, partMinAge} {
		for k, st := range d.parts {
			if now.Sub(st.lastUse) >= idle && !st.waitedOn() {
				delete(d.parts, k)
			}
		}
		if len(d.parts) < maxPartStates {
			return
		}
	}
}

// dropTopic forgets the partitions of a deleted topic (a topic created under its name starts
// afresh), except those fetches still wait on.
func (d *partitions) dropTopic(t topicmap.Target) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, st := range d.parts {
		if k.Target == t && !st.waitedOn() {
			delete(d.parts, k)
		}
	}
}

// partStates is how many partitions state is kept for.
func (d *partitions) partStates() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.parts)
}

// highWatermark returns the last high watermark seen.
func (s *partState) highWatermark() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hw
}

// observe records a partition's offsets and size as Iggy reports them; an increase wakes the
// waiting fetches, and the growth in bytes tells the size of the new messages, however they
// were written. A lower high watermark than known is not applied: it is reported (suspect)
// for the caller to confirm with a fresh read (confirmDrop), since this read may have been
// answered before a write the gateway has seen confirmed. A partition created anew (a topic
// deleted and recreated under the same name) starts afresh.
func (s *partState) observe(p *iggy.Partition) (suspect bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.observeLocked(p)
}

func (s *partState) observeLocked(p *iggy.Partition) (suspect bool) {
	hw := HighWatermark(p)
	if s.createdAt == 0 { // state begun by a write: the partition is the one written to
		s.createdAt = p.CreatedAt
	}
	if s.createdAt != p.CreatedAt {
		s.createdAt, s.hw, s.sizeBytes, s.wrote = p.CreatedAt, hw, p.SizeBytes, false
		s.logStartUntil = time.Time{}
		s.wakeLocked()
		return false
	}
	if hw < s.hw {
		return true
	}
	grew := hw > s.hw
	if grew && s.sizeBytes > 0 && p.SizeBytes > s.sizeBytes {
		s.noteSizesLocked(int(p.SizeBytes-s.sizeBytes), int(hw-s.hw))
	}
	s.hw, s.sizeBytes, s.wrote = hw, p.SizeBytes, false
	if grew {
		s.wakeLocked()
	}
	return false
}

// confirmDrop applies offsets read after observe reported a lower high watermark; known is
// the high watermark known before that read was sent. When the log still ends before it, the
// partition was truncated: it returns the known end (from) and where the log now continues
// (to: the fresh end, or the lowest offset written since, if lower), and the state takes the
// fresh offsets. Writes confirmed while the read was on its way may have raised the known
// high watermark past what the read could see: they are no evidence of a truncation. Nor is a
// drop that another read confirmed while this one was on its way (the offset probes after a
// reconnect and a Fetch may both notice one truncation): the state already ends lower than
// known, and only a log ending below that is a further truncation.
func (s *partState) confirmDrop(p *iggy.Partition, known uint64) (from, to uint64, truncated bool) {
	hw := HighWatermark(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	from = min(known, s.hw) // only confirmDrop lowers s.hw below a known end
	if (s.createdAt != 0 && s.createdAt != p.CreatedAt) || hw >= from {
		s.observeLocked(p)
		return 0, 0, false
	}
	to = hw
	if s.wrote {
		to = min(to, s.lowWrite)
	}
	s.hw, s.sizeBytes, s.wrote = hw, p.SizeBytes, false
	s.logStartUntil = time.Time{}
	s.wakeLocked() // waiting fetches answer at once: their consumers must learn the new epoch
	return from, to, true
}

// advance records a write of n messages of bytes in total that ends at hw (one past its last
// offset), and wakes the waiting fetches. Unlike observe it never lowers the high watermark:
// sends to one partition may confirm out of order.
func (s *partState) advance(hw uint64, bytes, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noteSizesLocked(bytes, n)
	// Only a write that landed below the known end can have filled offsets a truncation
	// freed; one that continues the known log says nothing about where a truncated log
	// resumed (it also keeps reads of known offsets, which do not reset this, from
	// dragging a later epoch's start back to the first write).
	if base := hw - uint64(max(n, 0)); base < s.hw && (!s.wrote || base < s.lowWrite) {
		s.lowWrite, s.wrote = base, true
	}
	if hw > s.hw {
		s.hw = hw
		s.wakeLocked()
	}
}

func (s *partState) wakeLocked() {
	for w := range s.waiters {
		w.wake()
	}
}

func (s *partState) addWaiter(w *waiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiters == nil {
		s.waiters = make(map[*waiter]struct{})
	}
	s.waiters[w] = struct{}{}
}

func (s *partState) waitedOn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiters) > 0
}

func (s *partState) removeWaiter(w *waiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiters, w)
}

// messageSize returns the recent size of a message (payload and headers), or def when none
// was seen yet.
func (s *partState) messageSize(def int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.avgSize > 0 {
		return s.avgSize
	}
	return max(def, 1)
}

// recentSize is the recent size of a message as the gateway saw it written or read, 0 when
// none was seen yet.
func (s *partState) recentSize() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.avgSize
}

// noteSizes records that n messages took bytes. The estimate rises at once and falls slowly,
// so a switch to larger messages cannot make the next poll ask for far too many.
func (s *partState) noteSizes(bytes, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noteSizesLocked(bytes, n)
}

func (s *partState) noteSizesLocked(bytes, n int) {
	if n <= 0 {
		return
	}
	s.avgSize = max(blend(s.avgSize, bytes, n), bytes/n) // rises at once, falls slowly
}

// blend folds a sample of n items taking bytes into avg, a running average per item (0:
// none yet), a quarter at a time.
func blend(avg, bytes, n int) int {
	sample := max(bytes/n, 1)
	if avg == 0 {
		return sample
	}
	return (3*avg + sample) / 4
}

// noteRecordSize records that the read path mapped n (> 0) messages into bytes of Kafka batch,
// and returns the partition's record size now. It is what sizes the next polls of the
// partition: a record is smaller than the message it came from (the gateway's own Iggy headers
// stay behind), so counts from message sizes fall short of a fetch's byte limit and take a
// second poll for the rest.
func (s *partState) noteRecordSize(bytes, n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordSize = blend(s.recordSize, bytes, n)
	return s.recordSize
}

// batchRecordSize is the recent size of a record in the batches Fetch built, 0 when none was
// built yet.
func (s *partState) batchRecordSize() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recordSize
}

// HighWatermark is one past the last offset of p. Iggy reports the last offset, and 0 both
// for an empty partition and for one holding only offset 0; the message count tells them
// apart.
func HighWatermark(p *iggy.Partition) uint64 {
	if p.CurrentOffset == 0 && p.MessagesCount == 0 {
		return 0
	}
	return p.CurrentOffset + 1
}

// storedSize is the average stored size of p's messages, Iggy's framing included; 0 when
// unknown.
func storedSize(p *iggy.Partition) int {
	if p.MessagesCount == 0 {
		return 0
	}
	return int(p.SizeBytes / p.MessagesCount)
}

// PartitionOf finds partition id in a topic as GetTopic returned it.
func PartitionOf(t *iggy.Topic, id int32) (*iggy.Partition, bool) {
	if id < 0 {
		return nil, false
	}
	if int(id) < len(t.Partitions) && t.Partitions[id].ID == uint32(id) {
		return &t.Partitions[id], true
	}
	for i := range t.Partitions {
		if t.Partitions[i].ID == uint32(id) {
			return &t.Partitions[i], true
		}
	}
	return nil, false
}

// logStartOffset returns the first retained offset of k, whose high watermark is hw: the
// offset of Iggy's first message (polled, then cached for logStartTTL), or hw when every
// message has expired.
func (dp *Plane) logStartOffset(ctx context.Context, s Storage, k partKey, st *partState, hw uint64) (uint64, error) {
	if hw == 0 {
		return 0, nil
	}
	now := time.Now()
	st.mu.Lock()
	ls, until := st.logStart, st.logStartUntil
	st.mu.Unlock()
	if now.Before(until) && ls <= hw {
		return ls, nil
	}
	polled, err := s.PollMessages(ctx, k.pollRequest(iggy.PollingStrategy{Kind: iggy.PollFirst}, 1))
	if err != nil {
		return 0, err
	}
	ls = hw
	if len(polled.Messages) > 0 {
		ls = min(polled.Messages[0].Offset, hw)
	}
	st.mu.Lock()
	st.logStart, st.logStartUntil = ls, now.Add(logStartTTL)
	st.mu.Unlock()
	return ls, nil
}

// probe polls one topic's partition offsets while fetches wait on it.
type probe struct {
	watchers int
	done     chan struct{}
}

// watchTopic makes sure t's offsets are probed until the returned function is called.
// Probes are shared: one per topic however many fetches wait on it. A probe runs on a
// goroutine of the Plane (Close stops it and waits for it); once the Plane is closed no probe
// starts, and waiting fetches meet new data when they read again.
func (dp *Plane) watchTopic(t topicmap.Target) (unwatch func()) {
	d := &dp.data
	d.mu.Lock()
	p := d.probes[t]
	if p == nil {
		if d.probes == nil {
			d.probes = make(map[topicmap.Target]*probe)
		}
		p = &probe{done: make(chan struct{})}
		d.probes[t] = p
		if !dp.closed {
			done := p.done
			dp.background.Go(func() { dp.probeTopic(t, done) })
		}
	}
	p.watchers++
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if p.watchers--; p.watchers == 0 {
			delete(d.probes, t)
			close(p.done)
		}
	}
}

// probeTopic probes t every probeInterval until done is closed (its last fetch stopped
// waiting) or the Plane closes. A panic in one round is recovered, logged with its stack and
// counted (internal/supervise, component "topic_probe"); the next round runs as usual, so the
// fetches waiting on t keep being woken.
func (dp *Plane) probeTopic(t topicmap.Target, done <-chan struct{}) {
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-dp.stopped:
			return
		case <-tick.C:
		}
		dp.probeOnce(t)
	}
}

// probeOnce reads t's partition offsets once and applies them, which wakes the fetches
// waiting on partitions that grew.
func (dp *Plane) probeOnce(t topicmap.Target) {
	defer supervise.Recover(dp.log, "topic_probe", nil)
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	topic, err := dp.storage(nil).GetTopic(ctx, iggy.Name(t.Stream), iggy.Name(t.Topic))
	if err != nil {
		// The waiting fetches meet the error themselves when they read again.
		return
	}
	ctx, cancel = context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	for i := range topic.Partitions {
		p := &topic.Partitions[i]
		k := partKey{Target: t, Partition: p.ID}
		_, _ = dp.readOffsets(ctx, dp.storage(nil), k, dp.data.part(k), p) // errors: the fetches meet them
	}
}

// partitionPanic logs a panic recovered while serving one partition of a request.
func (dp *Plane) partitionPanic(op string, cc *listener.ConnContext, k partKey, v any) {
	dp.logEntry(slog.LevelError, logPartitionPanic, op+": panic serving a partition; answered UNKNOWN_SERVER_ERROR", "conn", cc.ID, "client_id", cc.ClientID(),
		"iggy_stream", k.Stream, "iggy_topic", k.Topic, "partition", k.Partition, "panic", v, "stack", string(debug.Stack()))
}

// corruptKey is one unreadable message as seen by one connection.
type corruptKey struct {
	conn   uint64
	part   partKey
	offset uint64
}

// logCorrupt logs a message that cannot become a Kafka record, once per connection and
// message: consumers retry the same offset and must not flood the log.
func (dp *Plane) logCorrupt(cc *listener.ConnContext, k partKey, err *mapping.MessageError) {
	key := corruptKey{conn: cc.ID, part: k, offset: err.Offset}
	d := &dp.data
	d.mu.Lock()
	_, seen := d.corrupt[key]
	if !seen {
		if d.corrupt == nil || len(d.corrupt) >= corruptLogLimit {
			d.corrupt = make(map[corruptKey]struct{})
		}
		d.corrupt[key] = struct{}{}
	}
	d.mu.Unlock()
	if !seen {
		dp.log.Error("fetch: stored message cannot be read as a Kafka record; the partition is stuck at it",
			"conn", cc.ID, "client_id", cc.ClientID(), "iggy_stream", k.Stream, "iggy_topic", k.Topic,
			"partition", k.Partition, "offset", err.Offset, "err", err)
	}
}
