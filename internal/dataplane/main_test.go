package dataplane

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when goroutines outlive them: every goroutine a handler,
// a waiting fetch or a test starts must end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
