package topicstate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/keylock"
)

// Where the log lives: the gateway's reserved stream, one partition (topic state changes are
// rare admin operations; one partition keeps them in one order).
const (
	DefaultTopic = "__topic_state"
	partition    = 0
	// DefaultRefresh is how stale a read may be: reads see other gateways' changes within it.
	// Admin reads and every write catch up first (Sync).
	DefaultRefresh = time.Second
	// readBatch is how many records one catch-up read asks for.
	readBatch = 512
	// DefaultSnapshotEvery is how many records a snapshot is written after: a startup reads
	// at most about that many records past the latest snapshot.
	DefaultSnapshotEvery = 1000
)

// State is what the gateway keeps about one Kafka topic.
type State struct {
	// TopicID is the Iggy topic the state belongs to.
	TopicID uint32
	// Configs are the stored configs by name (not the ones Iggy holds: retention, flush).
	Configs map[string]string
	// LogStart are the log start offsets set by DeleteRecords, by partition.
	LogStart map[int32]int64
}

// Store is the topic-state view over its log. Writes are appended first and applied to the
// view in log order, so every gateway reading the log ends with the same view.
type Store struct {
	log           iggylog.Log
	logger        *slog.Logger
	refresh       time.Duration
	snapshotEvery int
	now           func() time.Time

	// syncMu serializes catching up with the log and appending to it, and guards next,
	// snapshotAt and sinceSnapshot.
	syncMu        sync.Mutex
	next          uint64  // the next log offset to read
	snapshotAt    *uint64 // the offset of the latest snapshot read, nil before one
	sinceSnapshot int     // records read after it (or since the start)
	epoch         uint64  // the highest controller epoch read (Record.Epoch)
	// writing counts the writes whose record is appended or on its way; while there are any,
	// catchUp notes in applied whether each record it reads was applied (not superseded), for
	// the write that appended it to learn (write).
	writing int
	applied map[uint64]bool

	// topicWrites serialise the writes of each topic (catch up, build from the view, append,
	// apply): per topic, with no lock over all topics held across the append, so a slow Iggy
	// append of one topic's record does not stall other topics' writes (issue 25).
	topicWrites keylock.Locks[string]

	// controllerEpoch returns this gateway's controller epoch (0 when it is not the
	// controller); nil: every record has epoch 0 (tests, a store without a coordinator log).
	controllerEpoch func() uint64

	mu        sync.RWMutex
	topics    map[string]*State
	refreshed time.Time
}

// New returns a store over log (iggylog.NewTopic(api, iggylog.ReservedStream, DefaultTopic,
// 1) in production). Call Load before using it.
func New(log iggylog.Log, logger *slog.Logger) *Store {
	if logger == nil {
		logger = slog.Default()
	}
	return &Store{log: log, logger: logger, refresh: DefaultRefresh, snapshotEvery: DefaultSnapshotEvery,
		now: time.Now, topics: make(map[string]*State)}
}

// SetControllerEpoch sets where configs and delete records get their controller epoch from
// (offsets.Store.Epoch of coordinator-log partition 0). Call it before Load.
func (s *Store) SetControllerEpoch(epoch func() uint64) { s.controllerEpoch = epoch }

// ErrSuperseded is returned by a write whose record a record of a newer controller epoch
// preceded in the log: this gateway is not (or no longer) the controller, and its record is
// ignored by every reader.
var ErrSuperseded = errors.New("topicstate: written by a superseded controller (another gateway is the controller now)")

// Load creates the log if needed and reads it: from the latest snapshot on when the last
// record points to one (or is one), else from the start. It writes a snapshot when it read
// many records past the latest one, so the next startup reads fewer.
func (s *Store) Load(ctx context.Context) error {
	if err := s.log.Ensure(ctx); err != nil {
		return fmt.Errorf("topicstate: %w", err)
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if err := s.startFromSnapshot(ctx); err != nil {
		return err
	}
	if err := s.catchUp(ctx); err != nil {
		return err
	}
	s.maybeSnapshot(ctx)
	return nil
}

// startFromSnapshot sets the view to the latest snapshot and next to the first record it
// does not cover; the caller holds syncMu. Without a usable snapshot it leaves the view empty
// and next at 0 (a full replay), logging why when a snapshot was expected.
func (s *Store) startFromSnapshot(ctx context.Context) error {
	end, err := s.log.End(ctx, partition)
	if err != nil || end == 0 {
		return wrapRead(err, 0)
	}
	last, err := s.readOne(ctx, end-1)
	if err != nil {
		return err
	}
	at := end - 1
	if last.Kind != KindSnapshot {
		if last.Snapshot == nil {
			return nil // no snapshot yet (or an undecodable last record, logged by catchUp)
		}
		if at = *last.Snapshot; at >= end-1 {
			s.logger.Error("topic state record points to a snapshot past it; replaying the whole log", "offset", end-1, "snapshot", at)
			return nil
		}
		if last, err = s.readOne(ctx, at); err != nil {
			return err
		}
	}
	if last.Kind != KindSnapshot || last.Upto > at {
		s.logger.Error("topic state snapshot unusable; replaying the whole log", "offset", at, "kind", last.Kind, "upto", last.Upto)
		return nil
	}
	s.mu.Lock()
	s.topics = make(map[string]*State, len(last.Topics))
	for name, st := range last.Topics {
		s.topics[name] = &State{TopicID: st.TopicID, Configs: st.Configs}
		if len(st.LogStart) > 0 {
			s.apply(&Record{Kind: KindLogStart, Topic: name, TopicID: st.TopicID, LogStart: st.LogStart})
		}
	}
	s.mu.Unlock()
	s.next, s.snapshotAt, s.epoch = last.Upto, &at, last.Epoch
	return nil
}

// readOne reads and decodes the record at offset (an undecodable one is the zero Record).
func (s *Store) readOne(ctx context.Context, offset uint64) (Record, error) {
	entries, err := s.log.ReadFrom(ctx, partition, offset, 1)
	if err != nil || len(entries) == 0 || entries[0].Offset != offset {
		return Record{}, wrapRead(err, offset)
	}
	r, _ := Decode(entries[0].Data)
	return r, nil
}

func wrapRead(err error, offset uint64) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("topicstate: reading the log at %d: %w", offset, err)
}

// maybeSnapshot appends a snapshot of the view when enough records were read since the
// latest one; the caller holds syncMu and has caught up (at startup: nothing else runs).
func (s *Store) maybeSnapshot(ctx context.Context) {
	if r := s.snapshotDue(); r != nil {
		s.appendRecord(ctx, r)
	}
}

// snapshotDue builds a snapshot of the view when enough records were read since the latest
// one, else returns nil; the caller holds syncMu and has caught up. The view covers the log
// up to r.Upto: records other gateways append before the snapshot lands lie after Upto and
// are replayed after it.
func (s *Store) snapshotDue() *Record {
	if s.sinceSnapshot < s.snapshotEvery {
		return nil
	}
	r := &Record{Kind: KindSnapshot, Upto: s.next, Epoch: s.epoch, Topics: make(map[string]SnapshotTopic)}
	s.mu.RLock()
	for name, st := range s.topics {
		starts := make(map[string]int64, len(st.LogStart))
		for p, off := range st.LogStart {
			starts[strconv.Itoa(int(p))] = off
		}
		r.Topics[name] = SnapshotTopic{TopicID: st.TopicID, Configs: st.Configs, LogStart: starts}
	}
	s.mu.RUnlock()
	return r
}

// appendSnapshot appends snapshot r without holding syncMu (a write's path: no lock across
// the round trip), then catches up with it.
func (s *Store) appendSnapshot(ctx context.Context, r *Record) {
	if _, err := s.log.Append(ctx, partition, [][]byte{r.Encode()}); err != nil {
		s.logger.Warn("topic state snapshot not written; the next startup reads more of the log", "err", err)
		return
	}
	if err := s.Sync(ctx); err != nil {
		s.logger.Warn("topic state catch-up after a snapshot failed", "err", err)
	}
}

// appendRecord is appendSnapshot for a caller holding syncMu (Load).
func (s *Store) appendRecord(ctx context.Context, r *Record) {
	if _, err := s.log.Append(ctx, partition, [][]byte{r.Encode()}); err != nil {
		s.logger.Warn("topic state snapshot not written; the next startup reads more of the log", "err", err)
		return
	}
	if err := s.catchUp(ctx); err != nil {
		s.logger.Warn("topic state catch-up after a snapshot failed", "err", err)
	}
}

// Sync catches up with every record appended so far (by any gateway).
func (s *Store) Sync(ctx context.Context) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	return s.catchUp(ctx)
}

// catchUp reads and applies the records from s.next on; the caller holds syncMu. A record
// that does not decode is logged and skipped: it can only have been written by a newer
// gateway or damaged in storage, and refusing every later record would be worse.
func (s *Store) catchUp(ctx context.Context) error {
	for {
		entries, err := s.log.ReadFrom(ctx, partition, s.next, readBatch)
		if err != nil {
			return wrapRead(err, s.next)
		}
		s.mu.Lock()
		for _, e := range entries {
			r, err := Decode(e.Data)
			switch {
			case err != nil:
				s.logger.Error("topic state record skipped", "offset", e.Offset, "err", err)
				s.sinceSnapshot++
			case r.Kind == KindSnapshot:
				// The view already holds what it says (it was read in order, or started
				// from a snapshot): only note where it is.
				at := e.Offset
				s.snapshotAt, s.sinceSnapshot = &at, 0
			default:
				applied := s.admit(&r)
				if applied {
					s.apply(&r)
				}
				if s.writing > 0 {
					if s.applied == nil {
						s.applied = make(map[uint64]bool)
					}
					s.applied[e.Offset] = applied
				}
				s.sinceSnapshot++
			}
			s.next = e.Offset + 1
		}
		s.refreshed = s.now()
		s.mu.Unlock()
		if len(entries) == 0 {
			return nil
		}
	}
}

// admit reports whether r counts: a configs or delete record below the highest controller
// epoch read before it was written by a superseded controller (a gateway that was paused or
// cut off while another became the controller) and is ignored.
func (s *Store) admit(r *Record) bool {
	if r.Kind == KindLogStart {
		return true
	}
	if r.Epoch < s.epoch {
		return false
	}
	s.epoch = r.Epoch
	return true
}

// apply applies r to the view; the caller holds mu.
func (s *Store) apply(r *Record) {
	if r.Kind == KindDelete {
		delete(s.topics, r.Topic)
		return
	}
	st := s.topics[r.Topic]
	if st == nil || st.TopicID != r.TopicID {
		st = &State{TopicID: r.TopicID}
		s.topics[r.Topic] = st
	}
	switch r.Kind {
	case KindConfigs:
		st.Configs = maps.Clone(r.Configs)
	case KindLogStart:
		if st.LogStart == nil {
			st.LogStart = make(map[int32]int64, len(r.LogStart))
		}
		for p, off := range r.LogStart {
			n, _ := parsePartition(p) // checked by Decode
			st.LogStart[n] = max(st.LogStart[n], off)
		}
	}
}

// Get returns the state of a topic whose Iggy topic id is topicID (the zero State when none
// is stored). The view may be up to the refresh interval behind other gateways: a read that
// finds it older catches up unless another read is already doing so.
func (s *Store) Get(ctx context.Context, topic string, topicID uint32) State {
	s.mu.RLock()
	stale := s.now().Sub(s.refreshed) >= s.refresh
	s.mu.RUnlock()
	if stale && s.syncMu.TryLock() {
		if err := s.catchUp(ctx); err != nil {
			s.logger.Warn("topic state refresh failed; serving the last known state", "err", err)
		}
		s.syncMu.Unlock()
	}
	return s.Cached(topic, topicID)
}

// Cached is Get without catching up.
func (s *Store) Cached(topic string, topicID uint32) State {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cachedLocked(topic, topicID)
}

// cachedLocked is Cached; the caller holds mu.
func (s *Store) cachedLocked(topic string, topicID uint32) State {
	st := s.topics[topic]
	if st == nil || st.TopicID != topicID {
		return State{TopicID: topicID}
	}
	return State{TopicID: st.TopicID, Configs: maps.Clone(st.Configs), LogStart: maps.Clone(st.LogStart)}
}

// SetConfigs replaces the stored configs of a topic.
func (s *Store) SetConfigs(ctx context.Context, topic string, topicID uint32, configs map[string]string) error {
	return s.write(ctx, topic, func() *Record {
		return &Record{Kind: KindConfigs, Topic: topic, TopicID: topicID, Configs: configs}
	})
}

// ErrNotRaised is returned by RaiseLogStart when nothing would change.
var ErrNotRaised = errors.New("topicstate: log start offsets already at or past the requested ones")

// RaiseLogStart raises the log start offsets of some partitions of a topic and returns the
// resulting offsets of those partitions. Offsets at or below the stored ones change nothing.
func (s *Store) RaiseLogStart(ctx context.Context, topic string, topicID uint32, starts map[int32]int64) (map[int32]int64, error) {
	err := s.write(ctx, topic, func() *Record {
		cur := s.Cached(topic, topicID).LogStart
		r := &Record{Kind: KindLogStart, Topic: topic, TopicID: topicID, LogStart: make(map[string]int64)}
		for p, off := range starts {
			if off > cur[p] {
				r.LogStart[strconv.Itoa(int(p))] = off
			}
		}
		if len(r.LogStart) == 0 {
			return nil
		}
		return r
	})
	if err != nil && !errors.Is(err, ErrNotRaised) {
		return nil, err
	}
	got := s.Cached(topic, topicID).LogStart
	out := make(map[int32]int64, len(starts))
	for p := range starts {
		out[p] = got[p]
	}
	return out, nil
}

// Forget drops everything stored about a topic (it was deleted).
func (s *Store) Forget(ctx context.Context, topic string) error {
	s.mu.RLock()
	_, known := s.topics[topic]
	s.mu.RUnlock()
	if !known {
		return nil
	}
	return s.write(ctx, topic, func() *Record { return &Record{Kind: KindDelete, Topic: topic} })
}

// write catches up, builds the record from the current view (nil: nothing to write, which
// returns ErrNotRaised), appends it and catches up again, which applies it in log order
// after whatever other gateways appended before it. The writes of one topic are serialised;
// syncMu is held only while the log is read and the view updated, not across the append.
func (s *Store) write(ctx context.Context, topic string, build func() *Record) error {
	unlock, err := s.topicWrites.Lock(ctx, topic)
	if err != nil {
		return err
	}
	defer unlock()
	s.syncMu.Lock()
	if err := s.catchUp(ctx); err != nil {
		s.syncMu.Unlock()
		return err
	}
	r := build()
	if r == nil {
		s.syncMu.Unlock()
		return ErrNotRaised
	}
	r.Snapshot = s.snapshotAt
	if r.Kind != KindLogStart && s.controllerEpoch != nil {
		r.Epoch = s.controllerEpoch()
	}
	s.writing++
	s.syncMu.Unlock()
	at, err := s.log.Append(ctx, partition, [][]byte{r.Encode()})
	s.syncMu.Lock()
	err = s.readBack(ctx, r, at, err)
	var snap *Record
	if err == nil {
		snap = s.snapshotDue()
	}
	s.syncMu.Unlock()
	if snap != nil {
		s.appendSnapshot(ctx, snap)
	}
	return err
}

// readBack ends a write whose record r was appended at offset at (or failed with err): it
// catches up to the record and reports whether it was applied. The caller holds syncMu.
func (s *Store) readBack(ctx context.Context, r *Record, at uint64, err error) error {
	defer s.doneWriting()
	if err != nil {
		return fmt.Errorf("topicstate: appending a %s record for %q: %w", r.Kind, r.Topic, err)
	}
	if s.next <= at {
		if err := s.catchUp(ctx); err != nil {
			return err
		}
	}
	applied, read := s.applied[at]
	delete(s.applied, at)
	switch {
	case !read:
		return fmt.Errorf("topicstate: the %s record for %q appended at offset %d was not read back", r.Kind, r.Topic, at)
	case !applied:
		return fmt.Errorf("%w: %s record for %q at offset %d (epoch %d, the log's %d)", ErrSuperseded, r.Kind, r.Topic, at, r.Epoch, s.epoch)
	}
	return nil
}

// doneWriting ends a write (write); the caller holds syncMu. The last one forgets what catchUp
// noted for the writes.
func (s *Store) doneWriting() {
	if s.writing--; s.writing == 0 {
		s.applied = nil
	}
}
