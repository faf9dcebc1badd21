package groupstest

import (
	"slices"
	"testing"
	"time"
)

func TestClockFiresInDeadlineOrder(t *testing.T) {
	c := NewClock()
	var fired []string
	c.AfterFunc(3*time.Second, func() { fired = append(fired, "3s") })
	c.AfterFunc(time.Second, func() {
		fired = append(fired, "1s")
		// Scheduled from a callback and due within the same Advance window.
		c.AfterFunc(time.Second, func() { fired = append(fired, "1s+1s") })
	})
	c.AfterFunc(2*time.Second, func() { fired = append(fired, "2s-a") })
	c.AfterFunc(2*time.Second, func() { fired = append(fired, "2s-b") })
	stop := c.AfterFunc(2500*time.Millisecond, func() { fired = append(fired, "stopped") })
	if !stop() || stop() {
		t.Fatal("stop should report true once")
	}
	c.Advance(2 * time.Second)
	if want := []string{"1s", "2s-a", "2s-b", "1s+1s"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	if c.Pending() != 1 || c.Elapsed() != 2*time.Second {
		t.Fatalf("pending %d elapsed %v", c.Pending(), c.Elapsed())
	}
	c.Advance(time.Second)
	if fired[len(fired)-1] != "3s" || c.Pending() != 0 {
		t.Fatalf("fired %v", fired)
	}
}
