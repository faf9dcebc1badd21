package dataplane

import (
	"testing"
)

func TestTooLarge(t *testing.T) {
	batch := func(size int) []byte {
		b := make([]byte, size)
		b[8], b[9], b[10], b[11] = byte((size-12)>>24), byte((size-12)>>16), byte((size-12)>>8), byte(size-12)
		return b
	}
	two := append(batch(100), batch(300)...)
	for _, tc := range []struct {
		max     int
		records []byte
		want    bool
	}{
		{0, batch(5000), false},
		{100, batch(100), false},
		{99, batch(100), true},
		{200, two, true},
		{300, two, false},
		{10, []byte{1, 2, 3}, false}, // left to the batch checks
	} {
		if got := (topicRules{maxBatch: tc.max}).tooLarge(tc.records); got != tc.want {
			t.Errorf("max %d, %d bytes: %v, want %v", tc.max, len(tc.records), got, tc.want)
		}
	}
}
