package testutil

import (
	"strings"
	"sync"
	"testing"
)

// Concurrent writes and reads are safe (run with -race) and every write lands.
func TestSyncBufferConcurrentUse(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("x"))
			}
		}()
		go func() {
			defer wg.Done()
			for range 100 {
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 400) {
		t.Fatalf("%d bytes, want 400", len(got))
	}
}
