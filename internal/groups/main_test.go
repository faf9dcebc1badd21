package groups

import (
	"testing"

	"go.uber.org/goleak"
)

// The coordinator starts timer goroutines (sessions, rebalances, delayed joins): none may
// outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
