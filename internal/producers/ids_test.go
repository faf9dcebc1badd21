package producers

import (
	"sync"
	"testing"
	"time"
)

func TestIDsAreUniqueAndCarryTheNode(t *testing.T) {
	for _, node := range []int{0, 1, 7, MaxNodeID} {
		a, err := NewAllocator(node)
		if err != nil {
			t.Fatal(err)
		}
		seen := make(map[int64]bool)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 1000 {
					id := a.Next()
					mu.Lock()
					if seen[id] {
						t.Errorf("duplicate id %d", id)
					}
					seen[id] = true
					mu.Unlock()
					if id <= 0 || NodeOf(id) != node {
						t.Errorf("id %d: positive? node %d, want %d", id, NodeOf(id), node)
					}
				}
			}()
		}
		wg.Wait()
	}
	for _, bad := range []int{-1, MaxNodeID + 1} {
		if _, err := NewAllocator(bad); err == nil {
			t.Errorf("node %d accepted", bad)
		}
	}
}

// A restart (a new allocator) a moment later starts above every id of the previous run,
// even when the previous run allocated faster than the clock advanced for a while.
func TestIDsGrowAcrossRestarts(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	first, _ := NewAllocator(3)
	first.now = func() time.Time { return now }
	var last int64
	for range 10 * ticksPerMilli { // ten milliseconds' worth of ids within one millisecond
		last = first.Next()
	}
	second, _ := NewAllocator(3)
	second.now = func() time.Time { return now.Add(20 * time.Millisecond) }
	if id := second.Next(); id <= last {
		t.Fatalf("id after restart %d not above %d", id, last)
	}
}

// Different nodes never produce the same id, even with the same clock.
func TestNodesDoNotCollide(t *testing.T) {
	now := time.Now()
	a, _ := NewAllocator(1)
	b, _ := NewAllocator(2)
	a.now = func() time.Time { return now }
	b.now = a.now
	if a.Next() == b.Next() {
		t.Fatal("collision")
	}
}

func BenchmarkNext(b *testing.B) {
	a, _ := NewAllocator(1)
	for b.Loop() {
		a.Next()
	}
}
