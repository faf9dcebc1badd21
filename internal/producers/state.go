package producers

import (
	"math"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Defaults of Limits, Kafka's numbers (docs/IDEMPOTENCE.md).
const (
	// Retained is how many batches per producer a partition remembers, Kafka's
	// ProducerStateEntry.NUM_BATCHES_TO_RETAIN (and the clients' max in-flight requests).
	Retained = 5
	// DefaultMaxProducers bounds the producers one partition remembers.
	DefaultMaxProducers = 4096
	// DefaultExpiry is how long a producer is remembered without writes, Kafka's
	// producer.id.expiration.ms.
	DefaultExpiry = 24 * time.Hour
)

// Limits bound one partition's producer state. Zero fields take the defaults.
type Limits struct {
	MaxProducers int              // producers remembered; the least recently written goes first
	Expiry       time.Duration    // a producer without writes for this long is forgotten
	Now          func() time.Time // the clock (time.Now); tests pass a fake one
	Usage        *Usage           // where the memory is accounted; may be shared by partitions
}

func (l Limits) withDefaults() Limits {
	if l.MaxProducers <= 0 {
		l.MaxProducers = DefaultMaxProducers
	}
	if l.Expiry <= 0 {
		l.Expiry = DefaultExpiry
	}
	if l.Now == nil {
		l.Now = time.Now
	}
	if l.Usage == nil {
		l.Usage = new(Usage)
	}
	return l
}

// Batch is what the state machine needs of an idempotent Kafka record batch.
type Batch struct {
	ProducerID int64
	Epoch      int16
	FirstSeq   int32 // the batch's base sequence
	Records    int32 // records in the batch, at least 1
}

// LastSeq is the sequence of the batch's last record. Sequences wrap from MaxInt32 to 0, as
// Kafka's DefaultRecordBatch.incrementSequence does.
func (b Batch) LastSeq() int32 { return addSeq(b.FirstSeq, b.Records-1) }

// valid reports whether b can be an idempotent batch: Kafka's LogValidator refuses a negative
// base sequence with a producer id as INVALID_RECORD; a negative epoch is refused the same way
// here (docs/IDEMPOTENCE.md).
func (b Batch) valid() bool {
	return b.ProducerID >= 0 && b.Epoch >= 0 && b.FirstSeq >= 0 && b.Records >= 1
}

func addSeq(seq, n int32) int32 {
	if seq > math.MaxInt32-n {
		return n - (math.MaxInt32 - seq) - 1
	}
	return seq + n
}

// inSequence is Kafka's ProducerAppendInfo.inSequence: next follows last, wrapping to 0.
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// Outcome says what the Produce handler does with a batch.
type Outcome uint8

const (
	// Append: write the batch, then call Pending.Commit with its base offset, or Pending.Abort
	// when it certainly was not written. Until then the producer's next batches wait.
	Append Outcome = iota + 1
	// Duplicate: the batch is a retry of one of the producer's last Retained batches. Answer
	// success with BaseOffset and write nothing.
	Duplicate
	// Wait: an earlier batch of the producer is being written, or its outcome is uncertain.
	// Wait for Ready to close, then call Check again.
	Wait
	// Refuse: answer the batch with Err; nothing changed.
	Refuse
)

// Decision is the answer of Check.
type Decision struct {
	Outcome    Outcome
	Pending    *Pending        // Append: the batch being written
	BaseOffset int64           // Duplicate: the offset the batch was first written at
	Ready      <-chan struct{} // Wait: closed when the earlier batch is resolved
	Err        *kerr.Error     // Refuse
}

// Partition is the idempotent-producer state of one partition: per producer id, its epoch and
// its last Retained batches. It follows Kafka's ProducerStateManager and ProducerAppendInfo
// (docs/IDEMPOTENCE.md) and is safe for concurrent use.
//
// Each producer has at most one batch being written at a time: its next batch waits until
// that one is committed or aborted. A batch whose write has an uncertain outcome (the Iggy
// connection was lost after the send) stays pending until the caller finds out whether it
// landed, so it can be neither lost nor written twice.
type Partition struct {
	limits Limits

	mu     sync.Mutex
	byID   map[int64]*producer
	recent producer // sentinel of the list of producers with written batches, most recent first
	listed int      // producers on that list
}

// producer is the state of one producer id on the partition.
type producer struct {
	id      int64
	epoch   int16
	batches [Retained]seqRange // ring, oldest at head
	head, n int
	// lastWrite is when the newest batch was written.
	lastWrite time.Time
	pending   *Pending

	prev, next *producer // on Partition.recent once a batch is written
}

// seqRange is one retained batch: its sequences and where it was written.
type seqRange struct {
	first, last int32
	base        int64
}

// NewPartition returns the empty state of a partition.
func NewPartition(l Limits) *Partition {
	p := &Partition{limits: l.withDefaults(), byID: make(map[int64]*producer)}
	p.recent.prev, p.recent.next = &p.recent, &p.recent
	return p
}

// Check decides what to do with b, following Kafka's order: a retry of a retained batch of
// the same epoch is a duplicate; an epoch older than the producer's is INVALID_PRODUCER_EPOCH;
// a producer the partition does not know is accepted at any sequence; a newer epoch must start
// at sequence 0; otherwise the batch must follow the last one, or it is
// OUT_OF_ORDER_SEQUENCE_NUMBER. A refused batch changes nothing.
func (p *Partition) Check(b Batch) Decision {
	if !b.valid() {
		return Decision{Outcome: Refuse, Err: kerr.InvalidRecord}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.byID[b.ProducerID]
	if pr != nil && pr.pending != nil {
		return Decision{Outcome: Wait, Ready: pr.pending.ready()}
	}
	if pr != nil && p.expired(pr, p.limits.Now()) {
		p.forget(pr)
		pr = nil
	}
	if pr == nil {
		pr = &producer{id: b.ProducerID, epoch: -1}
		p.byID[b.ProducerID] = pr
		p.limits.Usage.add(1)
		return p.begin(pr, b)
	}
	if b.Epoch == pr.epoch {
		if base, ok := pr.find(b.FirstSeq, b.LastSeq()); ok {
			return Decision{Outcome: Duplicate, BaseOffset: base}
		}
	}
	switch {
	case b.Epoch < pr.epoch:
		return Decision{Outcome: Refuse, Err: kerr.InvalidProducerEpoch}
	case b.Epoch > pr.epoch && b.FirstSeq != 0:
		return Decision{Outcome: Refuse, Err: kerr.OutOfOrderSequenceNumber}
	case b.Epoch == pr.epoch && !inSequence(pr.lastSeq(), b.FirstSeq):
		return Decision{Outcome: Refuse, Err: kerr.OutOfOrderSequenceNumber}
	}
	return p.begin(pr, b)
}

func (p *Partition) begin(pr *producer, b Batch) Decision {
	pr.pending = &Pending{part: p, prod: pr, batch: b}
	return Decision{Outcome: Append, Pending: pr.pending}
}

// expired reports whether pr has gone without writes for the expiry. A producer with a batch
// in flight never expires.
func (p *Partition) expired(pr *producer, now time.Time) bool {
	return pr.pending == nil && pr.n > 0 && now.Sub(pr.lastWrite) >= p.limits.Expiry
}

// forget drops pr.
func (p *Partition) forget(pr *producer) {
	if pr.next != nil {
		p.unlist(pr)
	}
	delete(p.byID, pr.id)
	p.limits.Usage.add(-1)
}

func (p *Partition) unlist(pr *producer) {
	pr.prev.next, pr.next.prev = pr.next, pr.prev
	pr.prev, pr.next = nil, nil
	p.listed--
}

// touch makes pr the most recently written producer.
func (p *Partition) touch(pr *producer, now time.Time) {
	if pr.next != nil {
		p.unlist(pr)
	}
	pr.lastWrite = now
	pr.prev, pr.next = &p.recent, p.recent.next
	p.recent.next.prev = pr
	p.recent.next = pr
	p.listed++
}

// trim forgets expired producers and, past MaxProducers, the least recently written ones.
// Producers with a batch in flight are skipped: their number is bounded by the requests in
// progress, and forgetting one would let its retry be written twice.
func (p *Partition) trim(now time.Time) {
	for pr := p.recent.prev; pr != &p.recent; {
		older := pr.prev
		switch {
		case pr.pending != nil:
		case p.listed > p.limits.MaxProducers || p.expired(pr, now):
			p.forget(pr)
		default:
			return // the rest were written more recently
		}
		pr = older
	}
}

// record adds a batch written at base at time written to pr, starting over on a new epoch.
func (p *Partition) record(pr *producer, b Batch, base int64, written, now time.Time) {
	if b.Epoch != pr.epoch {
		pr.epoch, pr.head, pr.n = b.Epoch, 0, 0
	}
	w := seqRange{first: b.FirstSeq, last: b.LastSeq(), base: base}
	if pr.n == Retained {
		pr.batches[pr.head] = w
		pr.head = (pr.head + 1) % Retained
	} else {
		pr.batches[(pr.head+pr.n)%Retained] = w
		pr.n++
	}
	p.touch(pr, written)
	p.trim(now)
}

// find returns the base offset of the retained batch with exactly these sequences.
func (pr *producer) find(first, last int32) (int64, bool) {
	for i := range pr.n {
		w := &pr.batches[(pr.head+i)%Retained]
		if w.first == first && w.last == last {
			return w.base, true
		}
	}
	return 0, false
}

func (pr *producer) lastSeq() int32 { return pr.batches[(pr.head+pr.n-1)%Retained].last }

// Restore records a batch found in the partition's stored tail (see Rebuild), as Kafka loads
// producer state from its log: without the checks of Check. Batches must come in offset
// order; one of an epoch older than the producer's, or written longer than the expiry ago,
// is ignored.
func (p *Partition) Restore(b Batch, base int64, written time.Time) {
	if !b.valid() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.limits.Now()
	if now.Sub(written) >= p.limits.Expiry {
		return
	}
	pr := p.byID[b.ProducerID]
	switch {
	case pr == nil:
		pr = &producer{id: b.ProducerID, epoch: -1}
		p.byID[b.ProducerID] = pr
		p.limits.Usage.add(1)
	case pr.pending != nil || b.Epoch < pr.epoch:
		return
	}
	if _, dup := pr.find(b.FirstSeq, b.LastSeq()); dup && b.Epoch == pr.epoch {
		return
	}
	p.record(pr, b, base, written, now)
}

// Len is the number of producers the partition remembers.
func (p *Partition) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byID)
}

// Pending is a batch being written. Exactly one of Commit or Abort ends it; MarkUncertain may
// come first.
type Pending struct {
	part      *Partition
	prod      *producer
	batch     Batch
	uncertain bool
	done      chan struct{} // made when someone waits
	resolved  bool
	written   bool  // resolved by Commit
	base      int64 // Commit's base offset
}

// Batch is the batch being written.
func (q *Pending) Batch() Batch { return q.batch }

// ready returns a channel closed when q is resolved. Called with the partition locked.
func (q *Pending) ready() <-chan struct{} {
	if q.done == nil {
		q.done = make(chan struct{})
	}
	return q.done
}

// MarkUncertain records that the write may or may not have landed. The producer stays blocked
// until the caller resolves it with Commit (found in the partition) or Abort (not there).
func (q *Pending) MarkUncertain() {
	q.part.mu.Lock()
	defer q.part.mu.Unlock()
	q.uncertain = true
}

// Uncertain reports whether MarkUncertain was called.
func (q *Pending) Uncertain() bool {
	q.part.mu.Lock()
	defer q.part.mu.Unlock()
	return q.uncertain
}

// Result reports how q ended: done is false until Commit or Abort, and written tells a Commit,
// at base.
func (q *Pending) Result() (base int64, written, done bool) {
	q.part.mu.Lock()
	defer q.part.mu.Unlock()
	return q.base, q.written, q.resolved
}

// Commit records that the batch was written at base: the producer's sequence moves on.
func (q *Pending) Commit(base int64) {
	p := q.part
	p.mu.Lock()
	defer p.mu.Unlock()
	if !q.resolve() {
		return
	}
	q.written, q.base = true, base
	now := p.limits.Now()
	p.record(q.prod, q.batch, base, now, now)
}

// Abort records that the batch was not written: the producer's state is as before Check.
func (q *Pending) Abort() {
	p := q.part
	p.mu.Lock()
	defer p.mu.Unlock()
	if !q.resolve() {
		return
	}
	if q.prod.n == 0 {
		p.forget(q.prod)
	}
}

// resolve ends q once, waking those who wait on it. Called with the partition locked.
func (q *Pending) resolve() bool {
	if q.resolved {
		return false
	}
	q.resolved = true
	q.prod.pending = nil
	if q.done != nil {
		close(q.done)
	}
	return true
}
