package dataplane

import (
	"testing"
	"time"
)

// consume reads n records of topic/partition from offset with a fresh client.
// waitForCondition polls cond for up to 10 s; for state that settles asynchronously.
func waitForCondition(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
