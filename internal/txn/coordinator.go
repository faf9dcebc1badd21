package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
)

// State is where a transactional id is in Kafka's state machine.
type State uint8

// States, as Kafka names them (TransactionState).
const (
	Empty State = iota
	Ongoing
	PrepareCommit
	PrepareAbort
	CompleteCommit
	CompleteAbort
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", s)
}

// TP is a Kafka topic partition.
type TP struct {
	Topic     string `json:"t"`
	Partition int32  `json:"p"`
}

// Range is a span of offsets [From, To) of one partition.
type Range struct {
	From uint64 `json:"f"`
	To   uint64 `json:"u"`
}

// Finisher completes transactions outside the coordinator.
type Finisher interface {
	// WriteMarkers appends a commit or abort marker of the producer to each partition and
	// returns, for an abort, the offset ranges of the transaction's records in each partition
	// (kept so that read_committed fetches skip them after a restart too). from is the lowest
	// offset each partition's records of the transaction can be at. Writing a marker twice is
	// harmless: a retry after a failure does.
	WriteMarkers(ctx context.Context, pid int64, epoch int16, commit bool, parts map[TP]uint64) (map[TP][]Range, error)
	// Begin tells the data plane that the producer's transaction includes tp and that its
	// records there are at offsets from or later; it returns that lower bound (the partition's
	// end as known now), recorded with the transaction.
	Begin(ctx context.Context, pid int64, tp TP) (from uint64, err error)
	// CommitOffsets applies a committed transaction's staged offsets of group.
	CommitOffsets(ctx context.Context, group string, commits []offsets.Commit) error
}

// Config configures a Coordinator.
type Config struct {
	// Log keeps the transaction state; nil keeps it in memory only (tests, no bridge).
	Log iggylog.Log
	// NewProducerID allocates producer ids (internal/producers).
	NewProducerID func() int64
	Finisher      Finisher
	// MaxTimeout is transaction.max.timeout.ms (Kafka's default 15 minutes).
	MaxTimeout time.Duration
	// ExpiryCheck is how often expired transactions are looked for (default 1 s).
	ExpiryCheck time.Duration
	Now         func() time.Time
	Logger      *slog.Logger
}

// txn is one transactional id.
type txn struct {
	op sync.Mutex // serializes the operations of one id, held across their I/O

	// Guarded by Coordinator.mu.
	id       string
	pid      int64
	epoch    int16
	timeout  time.Duration
	state    State
	started  time.Time
	parts    map[TP]uint64                    // partition → lowest offset of its records
	groups   map[string]map[TP]offsets.Commit // staged offsets by group
	hasGroup map[string]bool                  // groups added by AddOffsetsToTxn
}

// Coordinator is the transaction coordinator of this gateway.
type Coordinator struct {
	cfg Config
	log *slog.Logger

	mu    sync.Mutex
	txns  map[string]*txn
	byPID map[int64]*txn

	stop chan struct{}
	wg   sync.WaitGroup
}

// New returns a coordinator; Load replays its log, Start begins expiring transactions.
func New(cfg Config) *Coordinator {
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = 15 * time.Minute
	}
	if cfg.ExpiryCheck <= 0 {
		cfg.ExpiryCheck = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Coordinator{cfg: cfg, log: cfg.Logger, txns: map[string]*txn{}, byPID: map[int64]*txn{}, stop: make(chan struct{})}
}

// Errors carrying Kafka codes.
var (
	errFenced      = kerr.ProducerFenced
	errMapping     = kerr.InvalidProducerIDMapping
	errTxnState    = kerr.InvalidTxnState
	errConcurrent  = kerr.ConcurrentTransactions
	errUnavailable = kerr.CoordinatorNotAvailable
)

// Code is the Kafka code of an error of this package (0 for nil).
func Code(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// InitProducerID gives the transactional id a producer id and a new epoch, fencing every
// earlier producer of the id: an open transaction of the previous epoch is aborted first
// (with the new epoch, so late writes of the old producer are refused), a prepared one is
// completed. reqPID/reqEpoch (KIP-360, -1 when absent) must name the current producer.
func (c *Coordinator) InitProducerID(ctx context.Context, id string, timeoutMs int32, reqPID int64, reqEpoch int16) (int64, int16, error) {
	timeout := time.Duration(timeoutMs) * time.Millisecond
	if timeoutMs <= 0 || timeout > c.cfg.MaxTimeout {
		return -1, -1, kerr.InvalidTransactionTimeout
	}
	t := c.get(id, true)
	t.op.Lock()
	defer t.op.Unlock()
	c.mu.Lock()
	fresh := t.pid < 0
	if !fresh && reqPID >= 0 && (reqPID != t.pid || reqEpoch != t.epoch) {
		c.mu.Unlock()
		return -1, -1, errFenced
	}
	state := t.state
	c.mu.Unlock()
	switch state {
	case PrepareCommit, PrepareAbort:
		if err := c.complete(ctx, t); err != nil {
			return -1, -1, err
		}
	case Ongoing:
		if err := c.abortFenced(ctx, t, "a new producer of the transactional id"); err != nil {
			return -1, -1, err
		}
	}
	c.mu.Lock()
	next := t.copy()
	next.timeout, next.state, next.parts, next.groups, next.hasGroup = timeout, Empty, nil, nil, nil
	if fresh || t.epoch >= math.MaxInt16-1 {
		next.pid, next.epoch = c.cfg.NewProducerID(), 0
	} else {
		next.epoch++
	}
	c.mu.Unlock()
	if err := c.persist(ctx, next); err != nil {
		return -1, -1, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apply(t, next)
	return t.pid, t.epoch, nil
}

// check verifies that pid and epoch are the id's current producer (under c.mu).
func check(t *txn, pid int64, epoch int16) error {
	switch {
	case t.pid < 0 || t.pid != pid:
		return errMapping
	case epoch != t.epoch:
		return errFenced
	}
	return nil
}

// AddPartitions adds partitions to the id's transaction, starting it if none is open.
func (c *Coordinator) AddPartitions(ctx context.Context, id string, pid int64, epoch int16, tps []TP) error {
	t := c.get(id, false)
	if t == nil {
		return errMapping
	}
	t.op.Lock()
	defer t.op.Unlock()
	c.mu.Lock()
	if err := check(t, pid, epoch); err != nil {
		c.mu.Unlock()
		return err
	}
	if t.state == PrepareCommit || t.state == PrepareAbort {
		c.mu.Unlock()
		return errConcurrent
	}
	next := c.opened(t)
	c.mu.Unlock()
	var added []TP
	for _, tp := range tps {
		if _, ok := next.parts[tp]; ok {
			continue
		}
		from, err := c.cfg.Finisher.Begin(ctx, pid, tp)
		if err != nil {
			return err
		}
		next.parts[tp] = from
		added = append(added, tp)
	}
	if len(added) == 0 && next.state == t.state {
		return nil
	}
	if err := c.persist(ctx, next); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apply(t, next)
	return nil
}

// opened is a copy of t with its transaction open (under c.mu).
func (c *Coordinator) opened(t *txn) *txn {
	next := t.copy()
	if next.state != Ongoing {
		next.state, next.started = Ongoing, c.cfg.Now()
		next.parts, next.groups, next.hasGroup = map[TP]uint64{}, map[string]map[TP]offsets.Commit{}, map[string]bool{}
	}
	return next
}

// AddOffsets adds a consumer group's offsets to the id's transaction.
func (c *Coordinator) AddOffsets(ctx context.Context, id string, pid int64, epoch int16, group string) error {
	t := c.get(id, false)
	if t == nil {
		return errMapping
	}
	t.op.Lock()
	defer t.op.Unlock()
	c.mu.Lock()
	if err := check(t, pid, epoch); err != nil {
		c.mu.Unlock()
		return err
	}
	if t.state == PrepareCommit || t.state == PrepareAbort {
		c.mu.Unlock()
		return errConcurrent
	}
	next := c.opened(t)
	c.mu.Unlock()
	if next.hasGroup[group] && next.state == t.state {
		return nil
	}
	next.hasGroup[group] = true
	if err := c.persist(ctx, next); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apply(t, next)
	return nil
}

// CommitOffsets stages offsets of group in the transaction of the producer; they are applied
// to the committed offsets when the transaction commits. The group must have been added
// (AddOffsets).
func (c *Coordinator) CommitOffsets(ctx context.Context, id, group string, pid int64, epoch int16, commits []offsets.Commit) error {
	t := c.get(id, false)
	if t == nil {
		return errMapping
	}
	t.op.Lock()
	defer t.op.Unlock()
	c.mu.Lock()
	if err := check(t, pid, epoch); err != nil {
		c.mu.Unlock()
		return kerr.InvalidProducerEpoch // TxnOffsetCommit's fencing error (Kafka's group coordinator)
	}
	if t.state != Ongoing || !t.hasGroup[group] {
		c.mu.Unlock()
		return errTxnState
	}
	next := t.copy()
	c.mu.Unlock()
	staged := maps.Clone(next.groups[group])
	if staged == nil {
		staged = map[TP]offsets.Commit{}
	}
	for _, cm := range commits {
		staged[TP{cm.Topic, cm.Partition}] = cm
	}
	next.groups[group] = staged
	if err := c.persist(ctx, next); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apply(t, next)
	return nil
}

// EndTxn commits or aborts the id's transaction: the decision is logged first, then the
// markers are written to every partition and (on commit) the staged offsets applied, then the
// completion is logged. A failure after the decision leaves it prepared: a retry of EndTxn,
// the next InitProducerId or the next start completes it.
func (c *Coordinator) EndTxn(ctx context.Context, id string, pid int64, epoch int16, commit bool) error {
	t := c.get(id, false)
	if t == nil {
		return errMapping
	}
	t.op.Lock()
	defer t.op.Unlock()
	c.mu.Lock()
	if err := check(t, pid, epoch); err != nil {
		c.mu.Unlock()
		return err
	}
	state := t.state
	c.mu.Unlock()
	switch {
	case state == CompleteCommit && commit, state == CompleteAbort && !commit:
		return nil // a retry of an EndTxn that completed
	case state == PrepareCommit && commit, state == PrepareAbort && !commit:
		return c.complete(ctx, t)
	case state != Ongoing:
		return errTxnState
	}
	return c.end(ctx, t, commit, false)
}

// end logs the decision for t's open transaction and completes it; with bump the epoch is
// raised first, fencing the producer (a timeout, or a new producer of the id).
func (c *Coordinator) end(ctx context.Context, t *txn, commit, bump bool) error {
	c.mu.Lock()
	next := t.copy()
	c.mu.Unlock()
	next.state = PrepareAbort
	if commit {
		next.state = PrepareCommit
	}
	if bump {
		if next.epoch >= math.MaxInt16-1 {
			// The epoch cannot rise: a new producer id fences the old one just as well.
			next.pid, next.epoch = c.cfg.NewProducerID(), 0
		} else {
			next.epoch++
		}
	}
	if err := c.persist(ctx, next); err != nil {
		return err
	}
	c.mu.Lock()
	c.apply(t, next)
	c.mu.Unlock()
	return c.complete(ctx, t)
}

// abortFenced aborts t's open transaction with a bumped epoch.
func (c *Coordinator) abortFenced(ctx context.Context, t *txn, why string) error {
	c.log.Info("aborting transaction", "transactional_id", t.id, "producer_id", t.pid, "epoch", t.epoch, "reason", why)
	return c.end(ctx, t, false, true)
}

// complete writes the markers of t's prepared transaction, applies its offsets on commit and
// logs the completion.
func (c *Coordinator) complete(ctx context.Context, t *txn) error {
	c.mu.Lock()
	next := t.copy()
	c.mu.Unlock()
	commit := next.state == PrepareCommit
	aborted, err := c.cfg.Finisher.WriteMarkers(ctx, next.pid, next.epoch, commit, next.parts)
	if err != nil {
		c.log.Warn("transaction markers not written; retried on the next EndTxn", "transactional_id", next.id, "commit", commit, "err", err)
		return errConcurrent
	}
	if commit {
		for _, g := range slices.Sorted(maps.Keys(next.groups)) {
			cs := slices.Collect(maps.Values(next.groups[g]))
			if err := c.cfg.Finisher.CommitOffsets(ctx, g, cs); err != nil {
				c.log.Warn("transaction offsets not applied; retried on the next EndTxn", "transactional_id", next.id, "group", g, "err", err)
				return errConcurrent
			}
		}
	}
	next.state = CompleteAbort
	if commit {
		next.state = CompleteCommit
	}
	next.parts, next.groups, next.hasGroup = nil, nil, nil
	if err := c.persistWith(ctx, next, aborted); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apply(t, next)
	return nil
}

// Member reports whether a transactional Produce of pid/epoch to tp belongs to an open
// transaction that includes tp: 0, INVALID_PRODUCER_EPOCH for an older epoch of a known
// producer, or INVALID_TXN_STATE.
func (c *Coordinator) Member(pid int64, epoch int16, tp TP) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.byPID[pid]
	switch {
	case t == nil:
		return kerr.InvalidTxnState.Code
	case epoch < t.epoch:
		return kerr.InvalidProducerEpoch.Code
	case epoch > t.epoch || t.state != Ongoing:
		return kerr.InvalidTxnState.Code
	}
	if _, ok := t.parts[tp]; !ok {
		return kerr.InvalidTxnState.Code
	}
	return 0
}

// get returns the id's entry, creating an empty one (no producer yet) when create.
func (c *Coordinator) get(id string, create bool) *txn {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.txns[id]
	if t == nil && create {
		t = &txn{id: id, pid: -1, epoch: -1}
		c.txns[id] = t
	}
	return t
}

func (t *txn) copy() *txn {
	return &txn{id: t.id, pid: t.pid, epoch: t.epoch, timeout: t.timeout, state: t.state, started: t.started,
		parts: maps.Clone(t.parts), groups: maps.Clone(t.groups), hasGroup: maps.Clone(t.hasGroup)}
}

// apply makes next t's state (under c.mu).
func (c *Coordinator) apply(t *txn, next *txn) {
	if t.pid >= 0 && t.pid != next.pid && c.byPID[t.pid] == t {
		delete(c.byPID, t.pid)
	}
	t.pid, t.epoch, t.timeout, t.state, t.started = next.pid, next.epoch, next.timeout, next.state, next.started
	t.parts, t.groups, t.hasGroup = next.parts, next.groups, next.hasGroup
	if t.pid >= 0 {
		c.byPID[t.pid] = t
	}
}

// Start begins aborting expired transactions (transaction.timeout.ms) and completes the
// transactions the log left prepared. Close stops it.
func (c *Coordinator) Start(ctx context.Context) {
	c.mu.Lock()
	var prepared []*txn
	for _, t := range c.txns {
		if t.state == PrepareCommit || t.state == PrepareAbort {
			prepared = append(prepared, t)
		}
	}
	c.mu.Unlock()
	for _, t := range prepared {
		t.op.Lock()
		if err := c.complete(ctx, t); err != nil {
			c.log.Warn("prepared transaction not completed at start; retried by the expiry check", "transactional_id", t.id, "err", err)
		}
		t.op.Unlock()
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		tick := time.NewTicker(c.cfg.ExpiryCheck)
		defer tick.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-tick.C:
				c.Expire(context.Background())
			}
		}
	}()
}

// Close stops the expiry check.
func (c *Coordinator) Close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.wg.Wait()
}

// Expire aborts every open transaction older than its timeout, bumping its epoch so that its
// producer is fenced as Kafka does, and completes prepared ones a failure left behind.
func (c *Coordinator) Expire(ctx context.Context) {
	now := c.cfg.Now()
	c.mu.Lock()
	var due []*txn
	for _, t := range c.txns {
		if (t.state == Ongoing && now.Sub(t.started) > t.timeout) || t.state == PrepareCommit || t.state == PrepareAbort {
			due = append(due, t)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		if !t.op.TryLock() {
			continue // an operation is under way; next time
		}
		c.mu.Lock()
		state, expired := t.state, now.Sub(t.started) > t.timeout
		c.mu.Unlock()
		var err error
		switch {
		case state == Ongoing && expired:
			err = c.abortFenced(ctx, t, "transaction.timeout.ms passed")
		case state == PrepareCommit || state == PrepareAbort:
			err = c.complete(ctx, t)
		}
		if err != nil {
			c.log.Warn("expired transaction not aborted yet", "transactional_id", t.id, "err", err)
		}
		t.op.Unlock()
	}
}

// Describe returns the id's producer, epoch and state (ok false when unknown).
func (c *Coordinator) Describe(id string) (pid int64, epoch int16, state State, parts []TP, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.txns[id]
	if t == nil || t.pid < 0 {
		return -1, -1, Empty, nil, false
	}
	return t.pid, t.epoch, t.state, slices.SortedFunc(maps.Keys(t.parts), func(a, b TP) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	}), true
}
