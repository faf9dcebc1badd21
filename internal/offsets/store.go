package offsets

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
)

// Where the coordinator log lives in Iggy: this topic in iggylog.ReservedStream.
const (
	DefaultTopic      = "__consumer_offsets"
	DefaultPartitions = 16
)

// Config configures a Store. Start from DefaultConfig.
type Config struct {
	Log    iggylog.Log
	Logger *slog.Logger
	Now    func() time.Time

	// CheckpointEvery is how many records a log partition may receive after its latest
	// checkpoint before the store writes a new one; it bounds what startup replays.
	CheckpointEvery int
	// MaxRecordBytes bounds one log record; larger commits and checkpoints are split.
	MaxRecordBytes int
	// MaxMetadataBytes is Kafka's offset.metadata.max.bytes: longer commit metadata is refused
	// with OFFSET_METADATA_TOO_LARGE.
	MaxMetadataBytes int
	// ReadBatch is how many records one log read asks for during Load.
	ReadBatch int
	// MaxNameBytes bounds group and topic names (INVALID_GROUP_ID, UNKNOWN_TOPIC_OR_PARTITION).
	MaxNameBytes int
	// Recovery is what Load does with a damaged log partition.
	Recovery Recovery
	// OnRecovery, if set, is called for each log partition Load recovered from a damaged
	// checkpoint (a metrics hook).
	OnRecovery func(partition int)

	// WriteQueue is how many writes may wait for each log partition's writer; further
	// writers wait for room (backpressure).
	WriteQueue int
	// MaxBatchBytes bounds the records one append carries when queued writes are coalesced
	// (group commit).
	MaxBatchBytes int
	// WriteTimeout bounds one append to the log.
	WriteTimeout time.Duration

	// Node is this gateway's node id, recorded in its fence records (diagnostics only).
	Node int32
	// Unfenced: this gateway is configured as the only one (no BROKERS list), so no other
	// gateway can legitimately take a partition over. It writes no fence records, stamps its
	// records with the highest epoch already in the log (so every replay admits them) and
	// never gives a partition up for what others appended. Standalone gateways that share an
	// Iggy (tests, or an operator who did not list the others) then each keep serving their
	// own groups, as before fencing existed (docs/COORDINATOR-LOG.md §7).
	Unfenced bool
	// OnFenced, if set, is called (on the partition's writer goroutine; it must not block)
	// when this store finds that another gateway took over a log partition it still owned:
	// the store has given the partition up, and the caller may take it over again if the
	// membership still says it is this gateway's.
	OnFenced func(partition int)
}

// Recovery is what Load does with a damaged log partition (docs/COORDINATOR-LOG.md §5).
type Recovery int

const (
	// RecoverFallback replaces a damaged checkpoint (unreadable, incomplete, or pointed to
	// past the end of the log) by an earlier one, or by a replay from the start, with an
	// error log; a record that cannot be decoded still stops Load.
	RecoverFallback Recovery = iota
	// RecoverFail stops Load on any damage.
	RecoverFail
	// RecoverSkip is RecoverFallback that also skips undecodable records, logging each:
	// the operator's way out when a record is corrupt (its commit is lost).
	RecoverSkip
)

// ParseRecovery parses a recovery mode name: fallback, fail or skip.
func ParseRecovery(name string) (Recovery, error) {
	switch name {
	case "fallback":
		return RecoverFallback, nil
	case "fail":
		return RecoverFail, nil
	case "skip":
		return RecoverSkip, nil
	}
	return 0, fmt.Errorf("offsets: unknown recovery mode %q (want fallback, fail or skip)", name)
}

// DefaultConfig returns the default configuration over log.
func DefaultConfig(log iggylog.Log) Config {
	return Config{
		Log:              log,
		Logger:           slog.Default(),
		Now:              time.Now,
		CheckpointEvery:  1000,
		MaxRecordBytes:   256 << 10,
		MaxMetadataBytes: 4096,
		ReadBatch:        64,
		MaxNameBytes:     255,
		WriteQueue:       256,
		MaxBatchBytes:    1 << 20,
		WriteTimeout:     30 * time.Second,
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.Log == nil || c.Log.Partitions() <= 0 {
		errs = append(errs, errors.New("the Log is nil or has no partitions"))
	}
	if c.Logger == nil || c.Now == nil {
		errs = append(errs, errors.New("the Logger and Now must be set"))
	}
	if c.CheckpointEvery <= 0 || c.ReadBatch <= 0 || c.WriteQueue <= 0 || c.MaxBatchBytes <= 0 || c.WriteTimeout <= 0 {
		errs = append(errs, errors.New("the CheckpointEvery, ReadBatch, WriteQueue, MaxBatchBytes and WriteTimeout must be > 0"))
	}
	if c.MaxMetadataBytes < 0 || c.MaxMetadataBytes > 32<<10 {
		errs = append(errs, fmt.Errorf("MaxMetadataBytes %d is outside [0, 32768]", c.MaxMetadataBytes))
	}
	if c.MaxNameBytes <= 0 || c.MaxNameBytes > 1024 {
		errs = append(errs, fmt.Errorf("MaxNameBytes %d is outside [1, 1024]", c.MaxNameBytes))
	}
	// Any single entry (a partition with the largest metadata, under the longest names) must
	// fit in a record.
	if c.MaxRecordBytes < 64<<10 {
		errs = append(errs, fmt.Errorf("MaxRecordBytes %d is below 65536", c.MaxRecordBytes))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("offsets: invalid config: %w", err)
	}
	return nil
}

// Store is the committed-offset store. It is safe for concurrent use. Until Load has
// succeeded every operation answers COORDINATOR_LOAD_IN_PROGRESS.
type Store struct {
	cfg    Config
	log    iggylog.Log
	parts  []*partition
	loaded atomic.Bool

	closeMu sync.RWMutex // held for reading while a write is queued, so Close sees every one
	closed  atomic.Bool
}

// partition is one coordinator-log partition and the view of the groups that hash to it.
type partition struct {
	id int
	w  *writer

	state atomic.Int32 // stateNotOwned, stateLoading or stateServing (ownership.go)
	// term counts the times this store gave the partition up; a write queued in an earlier
	// term is dropped (fence.go).
	term atomic.Uint64
	// epoch is this store's owner epoch for the partition (fence.go), set when it took the
	// partition over.
	epoch atomic.Uint64

	// Owned by Load, then by the writer goroutine.
	checkpoint      uint64 // first record of the latest complete checkpoint
	sinceCheckpoint int    // records appended after it
	next            uint64 // where this owner expects its next append to land

	mu     sync.RWMutex // guards groups; never held across I/O
	groups view
}

// New returns a Store over cfg.Log. Call Load before using it.
func New(cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, log: cfg.Log}
	for i := range cfg.Log.Partitions() {
		s.parts = append(s.parts, &partition{id: i, w: newWriter(cfg.WriteQueue), checkpoint: NoCheckpoint, groups: make(view)})
	}
	return s, nil
}

// PartitionFor returns the coordinator-log partition of group among n partitions: FNV-1a
// (32 bit) of the group id modulo n. It must never change: it decides where a group's
// records live.
func PartitionFor(group string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(group))
	return int(h.Sum32() % uint32(n))
}

func (s *Store) partitionOf(group string) *partition {
	return s.parts[PartitionFor(group, len(s.parts))]
}

// ready returns the error every operation answers before Load and after Close.
func (s *Store) ready() error {
	switch {
	case s.closed.Load():
		return kerr.CoordinatorNotAvailable
	case !s.loaded.Load():
		return kerr.CoordinatorLoadInProgress
	}
	return nil
}

func (s *Store) checkGroup(group string) error {
	if err := s.ready(); err != nil {
		return err
	}
	if len(group) > s.cfg.MaxNameBytes {
		return kerr.InvalidGroupID
	}
	return s.partitionOf(group).serving()
}

// ErrorCode returns the Kafka error code for an error returned by the store: 0 for nil, the
// code of a wrapped *kerr.Error, else UNKNOWN_SERVER_ERROR.
func ErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// encodeSplit encodes r, split into several records of the same kind when it exceeds
// MaxRecordBytes.
func (s *Store) encodeSplit(r *Record) [][]byte {
	entry := commitEntry
	switch r.Kind {
	case KindDeleteOffsets:
		entry = deleteEntry
	case KindCommit:
	default:
		return [][]byte{r.encode(nil)}
	}
	var out [][]byte
	for _, piece := range chunk([]GroupState{r.Group}, s.cfg.MaxRecordBytes, headerSize+crcSize, groupHeader, entry) {
		part := *r
		part.Group = piece[0]
		out = append(out, part.encode(nil))
	}
	return out
}

// writeCheckpoint appends a snapshot of p's view as checkpoint chunks. Only p's writer (or
// Load, before it starts) calls it, so no record can slip between the snapshot and the chunks.
func (s *Store) writeCheckpoint(ctx context.Context, p *partition) error {
	p.mu.RLock()
	states := p.groups.snapshot()
	p.mu.RUnlock()
	pieces := chunk(states, s.cfg.MaxRecordBytes, headerSize+crcSize+checkpointHead, stateHeader, commitEntry)
	if len(pieces) == 0 {
		pieces = [][]GroupState{nil} // an empty partition still gets a (one-chunk) checkpoint
	}
	var idb [8]byte
	_, _ = rand.Read(idb[:]) // crypto/rand.Read never fails
	now := s.cfg.Now().UnixMilli()
	data := make([][]byte, len(pieces))
	for i, piece := range pieces {
		r := Record{
			Kind: KindCheckpoint, Checkpoint: p.checkpoint, Time: now, Epoch: p.epoch.Load(),
			CheckpointID: binary.BigEndian.Uint64(idb[:]), Seq: uint32(i), Total: uint32(len(pieces)), At: p.next, Groups: piece,
		}
		data[i] = r.encode(nil)
	}
	first, err := s.log.Append(ctx, p.id, data)
	if err == nil {
		err = s.landed(ctx, p, first, len(data))
	}
	if err != nil {
		s.cfg.Logger.Warn("coordinator log checkpoint failed", "partition", p.id, "err", err)
		return fmt.Errorf("offsets: checkpoint of coordinator log partition %d: %w", p.id, err)
	}
	p.checkpoint = first
	p.sinceCheckpoint = 0
	s.cfg.Logger.Debug("coordinator log checkpoint written", "partition", p.id, "offset", first, "records", len(data), "groups", len(states))
	return nil
}

// Close writes what is queued, then a checkpoint of every log partition that received
// records after its latest one, so that the next start replays nothing; it stops the writers
// and makes the store refuse further work.
func (s *Store) Close(ctx context.Context) error {
	if !s.loaded.Load() {
		return nil
	}
	s.closeMu.Lock()
	already := s.closed.Swap(true)
	s.closeMu.Unlock() // from here on nothing is queued any more
	if already {
		return nil
	}
	for _, p := range s.parts {
		p.w.closeCtx = ctx
		close(p.w.stop)
	}
	var errs []error
	for _, p := range s.parts {
		<-p.w.done
		errs = append(errs, p.w.closeErr)
	}
	return errors.Join(errs...)
}
