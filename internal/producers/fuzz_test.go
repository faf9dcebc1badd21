package producers

import (
	"testing"
	"time"
)

// key names one committed batch.
type key struct {
	pid         int64
	epoch       int16
	first, last int32
}

// snapshot is a producer's state as Check sees it.
type snapshot struct {
	present bool
	epoch   int16
	batches [Retained]seqRange
	head, n int
}

func snap(p *Partition, id int64) snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.byID[id]
	if pr == nil {
		return snapshot{}
	}
	return snapshot{present: true, epoch: pr.epoch, batches: pr.batches, head: pr.head, n: pr.n}
}

// FuzzPartition runs random operations (batches near the expected sequence, retries, epoch
// bumps, aborts, uncertain writes, clock jumps) and checks after each that the state machine
// keeps its invariants:
//   - a duplicate is answered with the offset its batch was committed at;
//   - a batch is appended, in the producer's current epoch, only right after its last batch;
//   - a refused batch, and a Wait, change nothing;
//   - one batch per producer is in flight at most;
//   - the usage counter matches the producers remembered, and at most MaxProducers of them
//     have written batches besides those with a batch in flight;
//   - the recency list is ordered by write time.
func FuzzPartition(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{0x10, 0x10, 0x10, 0x31, 0x52, 0x10, 0x7f, 0x10, 0xa0, 0x10, 0x10})
	f.Add([]byte{0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88, 0x77, 0x66, 0x55, 0x44})
	f.Fuzz(func(t *testing.T, ops []byte) {
		clock := newClock()
		usage := new(Usage)
		p := NewPartition(Limits{MaxProducers: 3, Expiry: time.Minute, Now: clock.now, Usage: usage})
		committed := map[key]int64{}
		var end int64
		var inFlight []*Pending
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i], ops[i+1]
			id := int64(op & 3)
			before := snap(p, id)
			switch op >> 5 {
			case 0: // advance the clock
				clock.advance(time.Duration(arg) * time.Second)
				continue
			case 1: // resolve the oldest batch in flight
				if len(inFlight) == 0 {
					continue
				}
				q := inFlight[0]
				inFlight = inFlight[1:]
				if arg&1 == 0 {
					q.Abort()
					continue
				}
				b := q.Batch()
				q.Commit(end)
				committed[key{b.ProducerID, b.Epoch, b.FirstSeq, b.LastSeq()}] = end
				end += int64(b.Records)
				continue
			}
			b := batchNear(before, id, op, arg)
			known := before.present && before.n > 0 && !expiredSnap(p, id, clock)
			d := p.Check(b)
			after := snap(p, id)
			switch d.Outcome {
			case Duplicate:
				if off, ok := committed[key{b.ProducerID, b.Epoch, b.FirstSeq, b.LastSeq()}]; !ok || off != d.BaseOffset {
					t.Fatalf("op %d: duplicate of %+v at %d; committed at %d (%v)", i, b, d.BaseOffset, off, ok)
				}
			case Append:
				if known && b.Epoch == before.epoch && !inSequence(before.batches[(before.head+before.n-1)%Retained].last, b.FirstSeq) {
					t.Fatalf("op %d: %+v appended out of sequence after %+v", i, b, before)
				}
				if known && (b.Epoch < before.epoch || b.Epoch > before.epoch && b.FirstSeq != 0) {
					t.Fatalf("op %d: %+v appended against the epoch rules (epoch %d)", i, b, before.epoch)
				}
				if arg&0x80 != 0 {
					d.Pending.MarkUncertain()
				}
				inFlight = append(inFlight, d.Pending)
			case Refuse, Wait:
				if after != before {
					t.Fatalf("op %d: %v of %+v changed the state from %+v to %+v", i, d.Outcome, b, before, after)
				}
			}
			checkInvariants(t, p, usage)
		}
	})
}

// batchNear picks a batch close to what the producer expects, so that every rule is reached.
func batchNear(s snapshot, id int64, op, arg byte) Batch {
	b := Batch{ProducerID: id, Epoch: s.epoch, Records: int32(arg&3) + 1}
	if b.Epoch < 0 {
		b.Epoch = 0
	}
	next := int32(0)
	if s.n > 0 {
		next = addSeq(s.batches[(s.head+s.n-1)%Retained].last, 1)
	}
	switch (arg >> 2) & 7 {
	case 0, 1, 2: // in sequence
		b.FirstSeq = next
	case 3: // retry of a retained batch
		if s.n > 0 {
			r := s.batches[(s.head+int(op>>2&7))%s.n]
			b.FirstSeq, b.Records = r.first, r.last-r.first+1
			if b.Records < 1 { // wrapped
				b.FirstSeq, b.Records = next, 1
			}
		}
	case 4: // gap
		b.FirstSeq = next + int32(arg>>5) + 1
	case 5: // epoch bump
		b.Epoch++
		b.FirstSeq = int32(arg >> 6)
	case 6: // stale epoch
		b.Epoch--
	case 7: // near the wrap
		b.FirstSeq = 1<<31 - 1 - int32(arg>>5)
	}
	return b
}

func expiredSnap(p *Partition, id int64, clock *fakeClock) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.byID[id]
	return pr != nil && clock.now().Sub(pr.lastWrite) >= p.limits.Expiry
}

func checkInvariants(t *testing.T, p *Partition, usage *Usage) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if int64(len(p.byID)) != usage.Producers() {
		t.Fatalf("usage %d, producers %d", usage.Producers(), len(p.byID))
	}
	pending, listed := 0, 0
	var newer time.Time
	for pr := p.recent.next; pr != &p.recent; pr = pr.next {
		listed++
		if pr.n == 0 || p.byID[pr.id] != pr {
			t.Fatalf("listed producer %d with %d batches, in map %v", pr.id, pr.n, p.byID[pr.id] == pr)
		}
		if !newer.IsZero() && pr.lastWrite.After(newer) {
			t.Fatalf("recency list out of order at producer %d", pr.id)
		}
		newer = pr.lastWrite
	}
	for _, pr := range p.byID {
		if pr.pending != nil {
			pending++
			if pr.pending.prod != pr || pr.pending.resolved {
				t.Fatalf("producer %d: bad pending batch", pr.id)
			}
		}
	}
	if listed != p.listed || listed > p.limits.MaxProducers+pending {
		t.Fatalf("%d listed (counted %d), %d in flight, max %d", listed, p.listed, pending, p.limits.MaxProducers)
	}
}
