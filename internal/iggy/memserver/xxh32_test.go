package memserver

import "testing"

// Known answers from the XXH32 reference implementation (seed 0).
func TestXXH32(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"", 0x02cc5d05},
		{"a", 0x550d7456},
		{"abc", 0x32d153ff},
		{"Nobody inspects the spammish repetition", 0xe2293b2f},
	} {
		if got := xxh32([]byte(tc.in)); got != tc.want {
			t.Errorf("xxh32(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
}
