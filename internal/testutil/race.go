//go:build race

package testutil

// RaceEnabled reports whether the race detector is on; allocation counts are meaningless then
// (it allocates on its own), so tests that assert them skip.
const RaceEnabled = true
