package txn

import "testing"

func TestPartitionLastStableAndAborted(t *testing.T) {
	var p Partition
	if p.LastStable(10) != 10 {
		t.Fatal("no transaction: LSO is the high watermark")
	}
	p.Begin(1, 10)
	p.Begin(2, 12)
	if got := p.LastStable(20); got != 10 {
		t.Fatalf("LSO %d, want the earliest open bound 10", got)
	}
	if !p.Wrote(1, 11, 3) || !p.Wrote(2, 14, 2) || !p.Wrote(1, 16, 1) {
		t.Fatal("writes of open transactions refused")
	}
	if p.Wrote(3, 17, 1) {
		t.Fatal("a producer without an open transaction recorded")
	}
	if got := p.LastStable(20); got != 11 {
		t.Fatalf("LSO %d, want the first written offset 11", got)
	}
	if r := p.End(2, true); r != nil {
		t.Fatalf("commit returned aborted ranges %v", r)
	}
	if got := p.LastStable(20); got != 11 {
		t.Fatalf("LSO %d after the later transaction committed", got)
	}
	r := p.End(1, false)
	if len(r) != 2 || r[0] != (Range{11, 14}) || r[1] != (Range{16, 17}) {
		t.Fatalf("aborted %v", r)
	}
	if got := p.LastStable(20); got != 20 {
		t.Fatalf("LSO %d with nothing open", got)
	}
	for off, want := range map[uint64]bool{10: false, 11: true, 13: true, 14: false, 15: false, 16: true, 17: false} {
		if _, ok := p.Aborted(off); ok != want {
			t.Errorf("offset %d aborted %v, want %v", off, ok, want)
		}
	}
	if end, _ := p.Aborted(12); end != 14 {
		t.Fatalf("aborted run ends at %d", end)
	}
	if p.AnyAborted(14, 16) || !p.AnyAborted(14, 17) || !p.AnyAborted(0, 12) || p.AnyAborted(17, 100) {
		t.Fatal("AnyAborted")
	}
	// Restored ranges merge with the known ones; a restored open transaction holds the LSO.
	p.Restore(5, 0, false, []Range{{14, 16}, {30, 31}})
	if end, ok := p.Aborted(11); !ok || end != 17 {
		t.Fatalf("merged run ends at %d", end)
	}
	p.Restore(6, 18, true, nil)
	if got := p.LastStable(40); got != 18 {
		t.Fatalf("LSO %d with a restored open transaction", got)
	}
	if p.End(6, false) != nil {
		t.Fatal("an abort with no written records has no ranges")
	}
}

// A transaction restored from the log is marked so: its pre-restart batches must be found in
// Iggy before an abort; one begun after the start is not.
func TestRestoredTransactionIsMarked(t *testing.T) {
	var p Partition
	p.Restore(1, 10, true, nil)
	p.Begin(2, 20)
	if !p.Restored(1) || p.Restored(2) || p.Restored(3) {
		t.Fatalf("restored: 1 %v, 2 %v, 3 %v", p.Restored(1), p.Restored(2), p.Restored(3))
	}
	p.Wrote(1, 12, 3)
	if got := p.End(1, false); len(got) != 1 || got[0] != (Range{12, 15}) {
		t.Fatalf("aborted %v", got)
	}
	if p.Restored(1) {
		t.Fatal("still restored after its end")
	}
}
