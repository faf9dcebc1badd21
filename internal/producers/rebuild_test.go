package producers

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
	"github.com/iggygw/iggy-gateway-kafka/internal/mapping"
	"github.com/twmb/franz-go/pkg/kerr"
)

// partitionLog is an Iggy partition as the Produce path fills it: each Kafka batch becomes
// one message per record, mapped by the mapping package.
type partitionLog struct {
	t     *testing.T
	clock *fakeClock
	msgs  []iggy.PolledMessage
}

// write stores a Kafka batch of n records; b.ProducerID < 0 writes a non-idempotent batch.
// It returns the batch's base offset.
func (l *partitionLog) write(b Batch) int64 {
	l.t.Helper()
	var kb kbatch.Builder
	kb.Begin(nil, -1)
	for i := range b.Records {
		if err := kb.Append(int64(i), l.clock.now().UnixMilli(), []byte("k"), fmt.Appendf(nil, "v%d", i), nil); err != nil {
			l.t.Fatal(err)
		}
	}
	batches, err := kbatch.Split(nil, kb.Finish())
	if err != nil {
		l.t.Fatal(err)
	}
	recs, err := batches[0].Decode(nil)
	if err != nil {
		l.t.Fatal(err)
	}
	recs.Header.ProducerID, recs.Header.ProducerEpoch, recs.Header.BaseSequence = b.ProducerID, b.Epoch, b.FirstSeq
	prod, idempotent := mapping.ProducerOf(&recs.Header)
	w := mapping.WindowOf(&recs)
	var enc mapping.Encoder
	base := int64(len(l.msgs))
	var rec kbatch.Record
	for it := recs.Iter(); it.Next(&rec); {
		var m mapping.Message
		if idempotent && int64(len(l.msgs)) == base {
			m, err = enc.AppendFirst(&rec, w, prod)
		} else {
			m, err = enc.Append(&rec, w)
		}
		if err != nil {
			l.t.Fatal(err)
		}
		l.msgs = append(l.msgs, iggy.PolledMessage{Offset: uint64(len(l.msgs)), Timestamp: uint64(l.clock.now().UnixMicro()),
			OriginTimestamp: m.OriginTimestamp, Payload: bytes.Clone(m.Payload), Headers: bytes.Clone(m.Headers)})
	}
	l.clock.advance(time.Second)
	return base
}

// native stores a message an Iggy client wrote, with kafka.* headers that mean nothing.
func (l *partitionLog) native() {
	hdr := iggy.AppendHeader(nil, mapping.KindString, []byte(mapping.HeaderProducerID), mapping.KindInt64, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	l.msgs = append(l.msgs, iggy.PolledMessage{Offset: uint64(len(l.msgs)), Timestamp: uint64(l.clock.now().UnixMicro()),
		Payload: []byte("native"), Headers: hdr})
}

// TestRebuildRecognisesRetriesAfterARestart: the state a gateway built while writing is
// rebuilt by the next gateway from the partition's tail, and answers retries the same way.
func TestRebuildRecognisesRetriesAfterARestart(t *testing.T) {
	clock := newClock()
	log := &partitionLog{t: t, clock: clock}
	before := NewPartition(Limits{Now: clock.now})
	write := func(b Batch) int64 {
		d := before.Check(b)
		if d.Outcome != Append {
			t.Fatalf("%+v: %v %v", b, d.Outcome, d.Err)
		}
		base := log.write(b)
		d.Pending.Commit(base)
		return base
	}
	write(Batch{ProducerID: 1, FirstSeq: 0, Records: 3})
	log.write(Batch{ProducerID: -1, Records: 2}) // not idempotent
	log.native()
	for seq := int32(3); seq < 3+6*2; seq += 2 { // six more batches: the first one is forgotten
		write(Batch{ProducerID: 1, FirstSeq: seq, Records: 2})
	}
	write(Batch{ProducerID: 2, Epoch: 4, FirstSeq: 100, Records: 1})
	write(Batch{ProducerID: 2, Epoch: 5, FirstSeq: 0, Records: 1}) // epoch bump
	lastOfOne := write(Batch{ProducerID: 1, FirstSeq: 15, Records: 1})

	after := NewPartition(Limits{Now: clock.now}) // the restarted gateway
	if err := after.Rebuild(log.msgs); err != nil {
		t.Fatal(err)
	}
	if after.Len() != before.Len() {
		t.Fatalf("%d producers rebuilt, %d before", after.Len(), before.Len())
	}
	probes := []Batch{
		{ProducerID: 1, FirstSeq: 15, Records: 1},             // the last batch before the crash
		{ProducerID: 1, FirstSeq: 7, Records: 2},              // retained
		{ProducerID: 1, FirstSeq: 0, Records: 3},              // forgotten: out of order
		{ProducerID: 1, FirstSeq: 3, Records: 2},              // forgotten: out of order
		{ProducerID: 1, FirstSeq: 17, Records: 1},             // a gap
		{ProducerID: 2, Epoch: 5, FirstSeq: 0, Records: 1},    // duplicate in the new epoch
		{ProducerID: 2, Epoch: 4, FirstSeq: 100, Records: 1},  // stale epoch
		{ProducerID: 2, Epoch: 6, FirstSeq: 1, Records: 1},    // bump not at 0
		{ProducerID: 3, Epoch: 0, FirstSeq: 1000, Records: 1}, // unknown
	}
	for _, b := range probes {
		want, got := before.Check(b), after.Check(b)
		if want.Outcome != got.Outcome || want.BaseOffset != got.BaseOffset || want.Err != got.Err {
			t.Errorf("%+v: rebuilt state says %v %d %v, the original %v %d %v", b,
				got.Outcome, got.BaseOffset, got.Err, want.Outcome, want.BaseOffset, want.Err)
		}
		for _, d := range []Decision{want, got} {
			if d.Pending != nil {
				d.Pending.Abort()
			}
		}
	}
	if d := after.Check(Batch{ProducerID: 1, FirstSeq: 15, Records: 1}); d.Outcome != Duplicate || d.BaseOffset != lastOfOne {
		t.Fatalf("retry of the last batch: %v at %d, want Duplicate at %d", d.Outcome, d.BaseOffset, lastOfOne)
	}
	if d := after.Check(Batch{ProducerID: 1, FirstSeq: 16, Records: 1}); d.Outcome != Append {
		t.Fatalf("next batch after rebuild: %v %v", d.Outcome, d.Err)
	}
}

// TestRebuildFromAPartialTail: a tail that starts inside a batch knows the batches after it.
func TestRebuildFromAPartialTail(t *testing.T) {
	clock := newClock()
	log := &partitionLog{t: t, clock: clock}
	log.write(Batch{ProducerID: 1, FirstSeq: 0, Records: 4})
	second := log.write(Batch{ProducerID: 1, FirstSeq: 4, Records: 2})
	p := NewPartition(Limits{Now: clock.now})
	if err := p.Rebuild(log.msgs[2:]); err != nil {
		t.Fatal(err)
	}
	if d := p.Check(Batch{ProducerID: 1, FirstSeq: 4, Records: 2}); d.Outcome != Duplicate || d.BaseOffset != second {
		t.Fatalf("batch in the tail: %v at %d", d.Outcome, d.BaseOffset)
	}
	if d := p.Check(Batch{ProducerID: 1, FirstSeq: 0, Records: 4}); d.Err != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("batch cut by the tail: %v %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", d.Outcome, d.Err)
	}
}

// TestRebuildForgetsExpiredProducers: a producer whose last write is older than the expiry
// is not restored.
func TestRebuildForgetsExpiredProducers(t *testing.T) {
	clock := newClock()
	log := &partitionLog{t: t, clock: clock}
	log.write(Batch{ProducerID: 1, FirstSeq: 0, Records: 1})
	clock.advance(2 * time.Hour)
	log.write(Batch{ProducerID: 2, FirstSeq: 0, Records: 1})
	p := NewPartition(Limits{Now: clock.now, Expiry: time.Hour})
	if err := p.Rebuild(log.msgs); err != nil {
		t.Fatal(err)
	}
	if p.Len() != 1 {
		t.Fatalf("%d producers, want 1", p.Len())
	}
}

func TestRebuildSkipsCorruptProducerHeaders(t *testing.T) {
	clock := newClock()
	log := &partitionLog{t: t, clock: clock}
	log.write(Batch{ProducerID: 1, FirstSeq: 0, Records: 1})
	good := log.write(Batch{ProducerID: 2, FirstSeq: 0, Records: 1})
	// Producer 1's first message loses its kafka.count header.
	hdr := log.msgs[0].Headers
	i := bytes.Index(hdr, []byte(mapping.HeaderRecords)) - 5
	log.msgs[0].Headers = append(bytes.Clone(hdr[:i]), hdr[i+5+len(mapping.HeaderRecords)+5+4:]...)

	p := NewPartition(Limits{Now: clock.now})
	err := p.Rebuild(log.msgs)
	if err == nil || !strings.Contains(err.Error(), "1 messages") {
		t.Fatalf("Rebuild = %v, want one corrupt message reported", err)
	}
	if d := p.Check(Batch{ProducerID: 2, FirstSeq: 0, Records: 1}); d.Outcome != Duplicate || d.BaseOffset != good {
		t.Fatalf("intact batch: %v at %d", d.Outcome, d.BaseOffset)
	}
}

func TestFindBatch(t *testing.T) {
	clock := newClock()
	log := &partitionLog{t: t, clock: clock}
	log.write(Batch{ProducerID: 1, FirstSeq: 0, Records: 2})
	log.native()
	base := log.write(Batch{ProducerID: 1, FirstSeq: 2, Records: 3})
	if got, ok := FindBatch(log.msgs, Batch{ProducerID: 1, FirstSeq: 2, Records: 3}); !ok || got != base {
		t.Fatalf("FindBatch = %d %v, want %d", got, ok, base)
	}
	for _, b := range []Batch{
		{ProducerID: 1, FirstSeq: 2, Records: 2},
		{ProducerID: 1, Epoch: 1, FirstSeq: 2, Records: 3},
		{ProducerID: 2, FirstSeq: 2, Records: 3},
		{ProducerID: 1, FirstSeq: 5, Records: 1},
	} {
		if _, ok := FindBatch(log.msgs, b); ok {
			t.Errorf("FindBatch found %+v", b)
		}
	}
}
