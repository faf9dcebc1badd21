package memserver

import (
	"slices"
	"testing"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// TestTruncatePartition: the tail is gone (also from inside a batch), polls end at the new
// end, the size shrinks, and the next append reuses the lost offsets.
func TestTruncatePartition(t *testing.T) {
	s, sess := testState(t)
	srv := &Server{state: s}
	mustTopic(t, s, sess, 1)
	send(t, s, sess, 0, "a", 3) // offsets 0..2
	send(t, s, sess, 0, "b", 3) // offsets 3..5
	_, tp, oerr := s.resolveTopic(name("s"), name("t"))
	if oerr != nil {
		t.Fatal(oerr)
	}
	p := tp.partition(0)
	sizeBefore := p.sizeBytes

	if err := srv.TruncatePartition("s", "t", 0, 6); err == nil {
		t.Fatal("truncating to the end: no error")
	}
	if err := srv.TruncatePartition("s", "t", 1, 2); err == nil {
		t.Fatal("truncating a missing partition: no error")
	}
	if err := srv.TruncatePartition("s", "t", 0, 4); err != nil { // inside the second batch
		t.Fatal(err)
	}
	if v := p.view(); v.CurrentOffset != 3 || v.MessagesCount != 4 || v.SizeBytes >= sizeBefore {
		t.Fatalf("after truncating to 4: %+v (size before %d)", v, sizeBefore)
	}
	if base := send(t, s, sess, 0, "c", 2); base != 4 {
		t.Fatalf("next append at %d, want 4 (the lost offsets are reused)", base)
	}
	consumer := wire.Consumer{Kind: wire.ConsumerKindConsumer, ID: id(7)}
	out, err := s.pollMessages(sess, wire.PollRequest{Consumer: consumer, Stream: name("s"), Topic: name("t"),
		Partition: ptr(uint32(0)), Strategy: wire.PollingStrategy{Kind: wire.PollFirst}, Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	offs, pls := payloads(t, out)
	if want := []string{"a-0", "a-1", "a-2", "b-0", "c-0", "c-1"}; !slices.Equal(pls, want) || !slices.Equal(offs, []uint64{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("after truncation and append: offsets %v payloads %v, want 0..5 %v", offs, pls, want)
	}
}
