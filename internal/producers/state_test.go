package producers

import (
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// fakeClock is a settable clock for Limits.Now.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)} }

// step is one batch offered to Check and what must come of it. An Append is committed at the
// next offset of the test's log, which then grows by the batch's records.
type step struct {
	pid     int64
	epoch   int16
	first   int32
	records int32
	want    Outcome
	err     *kerr.Error // Refuse
	base    int64       // Duplicate: the offset of the original
}

// w: a batch that is written. d: a retry answered with the original's offset. r: refused.
func w(epoch int16, first, records int32) step {
	return step{pid: 1, epoch: epoch, first: first, records: records, want: Append}
}

func d(epoch int16, first, records int32, base int64) step {
	return step{pid: 1, epoch: epoch, first: first, records: records, want: Duplicate, base: base}
}

func r(epoch int16, first, records int32, err *kerr.Error) step {
	return step{pid: 1, epoch: epoch, first: first, records: records, want: Refuse, err: err}
}

func pid(id int64, s step) step { s.pid = id; return s }

// TestKafkaSequenceAndEpochRules follows Kafka's ProducerStateManager / ProducerAppendInfo
// (checkProducerEpoch, checkSequence, inSequence, findDuplicateBatch) case by case.
func TestKafkaSequenceAndEpochRules(t *testing.T) {
	const maxSeq = math.MaxInt32
	cases := []struct {
		name  string
		steps []step
	}{
		{"first batch at sequence 0", []step{w(0, 0, 3)}},
		{"a producer the partition does not know is accepted at any sequence (Kafka 2.5+, KIP-360)",
			[]step{w(0, 42, 3), w(0, 45, 1)}},
		{"unknown producer at a later epoch, any sequence", []step{w(7, 100, 1), w(7, 101, 1)}},
		{"next batches in sequence", []step{w(0, 0, 3), w(0, 3, 1), w(0, 4, 10), w(0, 14, 1)}},
		{"gap is OUT_OF_ORDER_SEQUENCE_NUMBER and changes nothing",
			[]step{w(0, 0, 3), r(0, 4, 1, kerr.OutOfOrderSequenceNumber), r(0, 100, 1, kerr.OutOfOrderSequenceNumber), w(0, 3, 1)}},
		{"retry of the last batch is a duplicate at its offset",
			[]step{w(0, 0, 3), w(0, 3, 2), d(0, 3, 2, 3), d(0, 3, 2, 3), w(0, 5, 1)}},
		{"retry of any of the last five batches is a duplicate",
			[]step{w(0, 0, 1), w(0, 1, 2), w(0, 3, 3), w(0, 6, 4), w(0, 10, 5),
				d(0, 0, 1, 0), d(0, 1, 2, 1), d(0, 3, 3, 3), d(0, 6, 4, 6), d(0, 10, 5, 10), w(0, 15, 1)}},
		{"the sixth batch back is forgotten: out of order",
			[]step{w(0, 0, 1), w(0, 1, 1), w(0, 2, 1), w(0, 3, 1), w(0, 4, 1), w(0, 5, 1),
				r(0, 0, 1, kerr.OutOfOrderSequenceNumber), d(0, 1, 1, 1)}},
		{"same first sequence with another length is not a duplicate",
			[]step{w(0, 0, 3), r(0, 0, 2, kerr.OutOfOrderSequenceNumber), r(0, 0, 4, kerr.OutOfOrderSequenceNumber)}},
		{"a batch overlapping the last one is out of order",
			[]step{w(0, 0, 3), w(0, 3, 3), r(0, 4, 2, kerr.OutOfOrderSequenceNumber), r(0, 2, 4, kerr.OutOfOrderSequenceNumber)}},
		{"stale epoch is INVALID_PRODUCER_EPOCH", []step{w(2, 0, 1), r(1, 1, 1, kerr.InvalidProducerEpoch), w(2, 1, 1)}},
		{"stale epoch retrying a retained sequence range is INVALID_PRODUCER_EPOCH, not a duplicate",
			[]step{w(1, 0, 2), w(2, 0, 2), r(1, 0, 2, kerr.InvalidProducerEpoch)}},
		{"epoch bump starts over at sequence 0", []step{w(0, 0, 5), w(0, 5, 5), w(1, 0, 1), w(1, 1, 1)}},
		{"epoch bump not at sequence 0 is OUT_OF_ORDER_SEQUENCE_NUMBER and changes nothing",
			[]step{w(0, 0, 5), r(1, 5, 1, kerr.OutOfOrderSequenceNumber), r(1, 1, 1, kerr.OutOfOrderSequenceNumber), w(0, 5, 1)}},
		{"epoch bump forgets the old epoch's batches",
			[]step{w(0, 0, 1), w(1, 0, 1), d(1, 0, 1, 1), r(0, 0, 1, kerr.InvalidProducerEpoch)}},
		{"epoch jump by more than one", []step{w(0, 0, 1), w(5, 0, 1), r(3, 0, 1, kerr.InvalidProducerEpoch)}},
		{"sequence wraps from MaxInt32 to 0",
			[]step{w(0, maxSeq-1, 2), w(0, 0, 1), w(0, 1, 1), d(0, maxSeq-1, 2, 0)}},
		{"a batch spanning the wrap", []step{w(0, maxSeq-1, 3), w(0, 1, 1), d(0, maxSeq-1, 3, 0)}},
		{"after MaxInt32 the next batch is 0, not MaxInt32+1",
			[]step{w(0, maxSeq, 1), r(0, 1, 1, kerr.OutOfOrderSequenceNumber), w(0, 0, 1)}},
		{"negative sequence is INVALID_RECORD", []step{r(0, -1, 1, kerr.InvalidRecord), w(0, 0, 1)}},
		{"negative epoch is INVALID_RECORD", []step{r(-1, 0, 1, kerr.InvalidRecord)}},
		{"empty batch is INVALID_RECORD", []step{r(0, 0, 0, kerr.InvalidRecord)}},
		{"negative producer id is INVALID_RECORD",
			[]step{pid(-1, r(0, 0, 1, kerr.InvalidRecord))}},
		{"producers are independent",
			[]step{w(0, 0, 2), pid(2, w(0, 0, 1)), pid(2, r(0, 2, 1, kerr.OutOfOrderSequenceNumber)),
				w(0, 2, 1), pid(2, d(0, 0, 1, 2)), pid(2, w(0, 1, 1)), d(0, 0, 2, 0)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := newClock()
			p := NewPartition(Limits{Now: clock.now})
			var end int64
			for i, s := range tc.steps {
				b := Batch{ProducerID: s.pid, Epoch: s.epoch, FirstSeq: s.first, Records: s.records}
				got := p.Check(b)
				if got.Outcome != s.want {
					t.Fatalf("step %d %+v: outcome %v (err %v), want %v", i, b, got.Outcome, got.Err, s.want)
				}
				switch s.want {
				case Append:
					got.Pending.Commit(end)
					end += int64(s.records)
				case Duplicate:
					if got.BaseOffset != s.base {
						t.Fatalf("step %d %+v: duplicate at %d, want %d", i, b, got.BaseOffset, s.base)
					}
				case Refuse:
					if got.Err != s.err {
						t.Fatalf("step %d %+v: refused with %v, want %v", i, b, got.Err, s.err)
					}
				}
				clock.advance(time.Millisecond)
			}
		})
	}
}

func (o Outcome) String() string {
	return [...]string{"?", "Append", "Duplicate", "Wait", "Refuse"}[o]
}

func mustAppend(t *testing.T, p *Partition, b Batch) *Pending {
	t.Helper()
	d := p.Check(b)
	if d.Outcome != Append {
		t.Fatalf("%+v: %v (err %v), want Append", b, d.Outcome, d.Err)
	}
	return d.Pending
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestInFlightBatchBlocksTheProducerUntilResolved(t *testing.T) {
	p := NewPartition(Limits{})
	first := mustAppend(t, p, Batch{ProducerID: 1, FirstSeq: 0, Records: 2})

	retry := p.Check(Batch{ProducerID: 1, FirstSeq: 0, Records: 2})
	next := p.Check(Batch{ProducerID: 1, FirstSeq: 2, Records: 1})
	other := p.Check(Batch{ProducerID: 2, FirstSeq: 0, Records: 1})
	if retry.Outcome != Wait || next.Outcome != Wait {
		t.Fatalf("retry %v, next %v while the first batch is in flight: want Wait", retry.Outcome, next.Outcome)
	}
	if other.Outcome != Append {
		t.Fatalf("another producer got %v, want Append", other.Outcome)
	}
	if isClosed(retry.Ready) {
		t.Fatal("Ready closed before the batch was resolved")
	}
	first.MarkUncertain()
	if !first.Uncertain() {
		t.Fatal("Uncertain after MarkUncertain = false")
	}
	if d := p.Check(Batch{ProducerID: 1, FirstSeq: 2, Records: 1}); d.Outcome != Wait {
		t.Fatalf("next batch after an uncertain write: %v, want Wait", d.Outcome)
	}
	first.Commit(10) // the read-back found it at offset 10
	if !isClosed(retry.Ready) || !isClosed(next.Ready) {
		t.Fatal("Ready not closed by Commit")
	}
	if d := p.Check(Batch{ProducerID: 1, FirstSeq: 0, Records: 2}); d.Outcome != Duplicate || d.BaseOffset != 10 {
		t.Fatalf("retry after commit: %v at %d, want Duplicate at 10", d.Outcome, d.BaseOffset)
	}
	mustAppend(t, p, Batch{ProducerID: 1, FirstSeq: 2, Records: 1})
}

func TestAbortLeavesTheStateAsBefore(t *testing.T) {
	p := NewPartition(Limits{})
	mustAppend(t, p, Batch{ProducerID: 1, Epoch: 3, FirstSeq: 0, Records: 2}).Commit(0)

	q := mustAppend(t, p, Batch{ProducerID: 1, Epoch: 3, FirstSeq: 2, Records: 1})
	wait := p.Check(Batch{ProducerID: 1, Epoch: 3, FirstSeq: 2, Records: 1})
	q.MarkUncertain()
	q.Abort() // the read-back did not find it
	q.Commit(99)
	if !isClosed(wait.Ready) {
		t.Fatal("Ready not closed by Abort")
	}
	// Not written: the retry is written, not a duplicate; a Commit after Abort did nothing.
	mustAppend(t, p, Batch{ProducerID: 1, Epoch: 3, FirstSeq: 2, Records: 1}).Commit(2)
	if d := p.Check(Batch{ProducerID: 1, Epoch: 3, FirstSeq: 2, Records: 1}); d.BaseOffset != 2 {
		t.Fatalf("duplicate at %d, want 2", d.BaseOffset)
	}

	// An aborted first batch of a new producer leaves nothing behind.
	usage := new(Usage)
	p = NewPartition(Limits{Usage: usage})
	mustAppend(t, p, Batch{ProducerID: 5, FirstSeq: 7, Records: 1}).Abort()
	if p.Len() != 0 || usage.Producers() != 0 {
		t.Fatalf("after aborting a new producer's batch: %d producers, usage %d", p.Len(), usage.Producers())
	}
}

func TestProducersExpireWithoutWrites(t *testing.T) {
	clock := newClock()
	usage := new(Usage)
	p := NewPartition(Limits{Now: clock.now, Expiry: time.Hour, Usage: usage})
	mustAppend(t, p, Batch{ProducerID: 1, FirstSeq: 0, Records: 1}).Commit(0)
	mustAppend(t, p, Batch{ProducerID: 2, FirstSeq: 0, Records: 1}).Commit(1)

	clock.advance(59 * time.Minute)
	mustAppend(t, p, Batch{ProducerID: 2, FirstSeq: 1, Records: 1}).Commit(2)
	if d := p.Check(Batch{ProducerID: 1, FirstSeq: 5, Records: 1}); d.Outcome != Refuse {
		t.Fatalf("producer 1 before its expiry: %v, want Refuse", d.Outcome)
	}
	clock.advance(time.Minute)
	// Producer 1 is forgotten once a write trims the partition, or when it is looked up.
	mustAppend(t, p, Batch{ProducerID: 3, FirstSeq: 0, Records: 1}).Commit(3)
	if p.Len() != 2 || usage.Producers() != 2 {
		t.Fatalf("after producer 1's expiry: %d producers (usage %d), want 2", p.Len(), usage.Producers())
	}
	if d := p.Check(Batch{ProducerID: 1, FirstSeq: 0, Records: 1}); d.Outcome != Append {
		t.Fatalf("retry of an expired producer's batch: %v, want Append (Kafka forgets it too)", d.Outcome)
	} else {
		d.Pending.Abort()
	}
	clock.advance(time.Hour)
	if d := p.Check(Batch{ProducerID: 2, FirstSeq: 9, Records: 1}); d.Outcome != Append {
		t.Fatalf("expired producer looked up: %v, want Append at any sequence", d.Outcome)
	} else {
		d.Pending.Commit(4)
	}
}

func TestLeastRecentlyWrittenProducerIsEvicted(t *testing.T) {
	usage := new(Usage)
	clock := newClock()
	p := NewPartition(Limits{MaxProducers: 3, Now: clock.now, Usage: usage})
	for id := range int64(3) {
		mustAppend(t, p, Batch{ProducerID: id, FirstSeq: 0, Records: 1}).Commit(id)
		clock.advance(time.Second)
	}
	mustAppend(t, p, Batch{ProducerID: 0, FirstSeq: 1, Records: 1}).Commit(3) // 0 is now the most recent
	// A duplicate is not a write: producer 1 stays the least recently written.
	if d := p.Check(Batch{ProducerID: 1, FirstSeq: 0, Records: 1}); d.Outcome != Duplicate {
		t.Fatalf("duplicate: %v", d.Outcome)
	}
	// Producer 2 has a batch in flight: it is never evicted.
	inFlight := mustAppend(t, p, Batch{ProducerID: 2, FirstSeq: 1, Records: 1})
	mustAppend(t, p, Batch{ProducerID: 9, FirstSeq: 0, Records: 1}).Commit(4)
	if p.Len() != 3 || usage.Producers() != 3 {
		t.Fatalf("%d producers (usage %d), want 3", p.Len(), usage.Producers())
	}
	if d := p.Check(Batch{ProducerID: 1, FirstSeq: 0, Records: 1}); d.Outcome != Append {
		t.Fatalf("evicted producer 1: %v, want Append (forgotten)", d.Outcome)
	} else {
		d.Pending.Abort()
	}
	inFlight.Commit(5)
	if d := p.Check(Batch{ProducerID: 2, FirstSeq: 1, Records: 1}); d.Outcome != Duplicate || d.BaseOffset != 5 {
		t.Fatalf("producer 2 after its in-flight batch: %v at %d", d.Outcome, d.BaseOffset)
	}
	if usage.Bytes() != 3*EntryBytes {
		t.Fatalf("usage %d bytes, want %d", usage.Bytes(), 3*EntryBytes)
	}
}

func TestRestoreRebuildsWithoutChecks(t *testing.T) {
	clock := newClock()
	p := NewPartition(Limits{Now: clock.now, Expiry: time.Hour})
	p.Restore(Batch{ProducerID: 1, Epoch: 0, FirstSeq: 0, Records: 2}, 0, clock.t)
	p.Restore(Batch{ProducerID: 1, Epoch: 1, FirstSeq: 0, Records: 2}, 2, clock.t)
	p.Restore(Batch{ProducerID: 1, Epoch: 0, FirstSeq: 2, Records: 2}, 4, clock.t) // older epoch: ignored
	p.Restore(Batch{ProducerID: 1, Epoch: 1, FirstSeq: 2, Records: 2}, 6, clock.t)
	p.Restore(Batch{ProducerID: 1, Epoch: 1, FirstSeq: 2, Records: 2}, 8, clock.t)                   // same batch again: first kept
	p.Restore(Batch{ProducerID: 2, Epoch: 0, FirstSeq: 0, Records: 1}, 9, clock.t.Add(-2*time.Hour)) // long expired
	p.Restore(Batch{ProducerID: -1, Epoch: 0, FirstSeq: 0, Records: 1}, 10, clock.t)                 // invalid: ignored
	if d := p.Check(Batch{ProducerID: 1, Epoch: 1, FirstSeq: 2, Records: 2}); d.Outcome != Duplicate || d.BaseOffset != 6 {
		t.Fatalf("restored batch: %v at %d, want Duplicate at 6", d.Outcome, d.BaseOffset)
	}
	if d := p.Check(Batch{ProducerID: 1, Epoch: 0, FirstSeq: 4, Records: 1}); d.Err != kerr.InvalidProducerEpoch {
		t.Fatalf("older epoch after restore: %v", d.Err)
	}
	if p.Len() != 1 {
		t.Fatalf("%d producers after restore, want 1 (producer 2 expired)", p.Len())
	}
}
