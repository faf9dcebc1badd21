package txn

import (
	"testing"

	"go.uber.org/goleak"
)

// Start runs the expiry check on a goroutine; Close must end it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
