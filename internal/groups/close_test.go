package groups

import (
	"testing"
	"time"
)

// Close stops every armed timer (issue 25: the coordinator had no Close and its timers stayed
// armed after the gateway stopped): a member whose session would expire stays, and no timer
// armed later runs.
func TestCloseStopsTimers(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("c1", "c2")
	if h.clock.Pending() == 0 {
		t.Fatal("a stable group has no session timers armed")
	}
	h.c.Close()
	if n := h.clock.Pending(); n != 0 {
		t.Fatalf("%d timers armed after Close", n)
	}
	h.clock.Advance(time.Hour) // past every session timeout
	if got := len(h.describe().Members); got != len(ids) {
		t.Errorf("%d members after Close and an hour, want %d: a session expired", got, len(ids))
	}
	h.heartbeat(ids[0], gen) // would re-arm the member's session
	if n := h.clock.Pending(); n != 0 {
		t.Errorf("%d timers armed after Close by a heartbeat", n)
	}
	h.c.Close() // again: nothing
}
