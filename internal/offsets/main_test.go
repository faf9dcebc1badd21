package offsets

import (
	"testing"

	"go.uber.org/goleak"
)

// Every store a test loads starts one writer goroutine per log partition; Close must end
// them all.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
