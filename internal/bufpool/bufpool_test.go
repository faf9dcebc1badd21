package bufpool

import "testing"

func TestGetCapacity(t *testing.T) {
	for _, n := range []int{0, 1, MinSize - 1, MinSize, MinSize + 1, 1 << 20, 1<<20 + 1, 3 << 20, maxPooled, maxPooled + 1} {
		b := Get(n)
		if len(b) != 0 || cap(b) < n || cap(b) < MinSize {
			t.Errorf("Get(%d): len %d cap %d", n, len(b), cap(b))
		}
		Put(b)
	}
}

// A buffer put back serves later Gets only up to its own capacity: a 3 MiB buffer lands in
// the 2 MiB class, never in the 4 MiB one.
func TestPutClassNeverOverstates(t *testing.T) {
	for _, size := range []int{MinSize, 3 << 20, 5<<20 + 7, maxPooled} {
		Put(make([]byte, 0, size))
		for range 4 {
			for _, want := range []int{size / 2, size, size + 1} {
				if b := Get(want); cap(b) < want {
					t.Fatalf("after Put(cap %d), Get(%d) has cap %d", size, want, cap(b))
				}
			}
		}
	}
}

func TestSizeForIsWhatGetAllocates(t *testing.T) {
	for _, n := range []int{1, MinSize, MinSize + 1, 1 << 20, 1<<20 + 1, maxPooled, maxPooled + 1, 100 << 20} {
		// A size no buffer of the pool can serve yet: Get allocates SizeFor(n) bytes.
		if got := cap(Get(n)); got < SizeFor(n) || SizeFor(n) < n {
			t.Errorf("SizeFor(%d) = %d, Get allocated %d", n, SizeFor(n), got)
		}
	}
	if got := SizeFor(3 << 20); got != 4<<20 {
		t.Errorf("SizeFor(3 MiB) = %d, want the 4 MiB class", got)
	}
}

func TestClass(t *testing.T) {
	for _, tc := range []struct{ n, class int }{
		{0, minClass}, {MinSize, minClass}, {MinSize + 1, minClass + 1}, {1 << 20, 20}, {1<<20 + 1, 21}, {maxPooled, maxClass},
	} {
		if got := class(tc.n); got != tc.class {
			t.Errorf("class(%d) = %d, want %d", tc.n, got, tc.class)
		}
	}
}

func BenchmarkGetPut(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Put(Get(1 << 20))
	}
}
