package groups

import "time"

// Clock is the coordinator's source of timers. It is injected so that tests can drive time
// (see the groupstest package).
type Clock interface {
	// AfterFunc arranges for f to be called once d has elapsed and returns a function that
	// cancels the call; it reports whether the call was stopped before it ran. The coordinator
	// tolerates a call that races with its cancellation.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock is the wall clock.
type SystemClock struct{}

// AfterFunc implements Clock with time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
