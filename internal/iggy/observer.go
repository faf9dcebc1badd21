package iggy

import (
	"context"
	"errors"
	"time"
)

// Observer receives the outcome of every command a Client or Conn runs, for metrics and logs.
// Its methods are called on the calling goroutine and must be cheap and safe for concurrent
// use. It knows commands by name (the names of Iggy's protocol, e.g. "poll_messages").
type Observer interface {
	// CommandDone: command ended after d (taking a pooled connection included) with outcome.
	CommandDone(command string, d time.Duration, outcome Outcome)
	// LoginRejected: Iggy refused the login of a new or re-established connection (err is an
	// *Error: wrong credentials, an inactive user, another protocol version). No retry helps
	// until the account or the server changes.
	LoginRejected(err error)
}

// PrimaryObserver is implemented by an Observer that wants to hear which Iggy node the client
// sends its requests to. PrimaryChanged runs once when the client first finds its primary
// (from is empty) and at every move to another node; resume is how long requests found no
// primary, from the first failure seen on the old one until the new one was confirmed (zero
// for a move the roster announced while the old primary still answered). It must return
// quickly.
type PrimaryObserver interface {
	PrimaryChanged(from, to string, resume time.Duration)
}

// Outcome classifies how a command ended.
type Outcome string

// Command outcomes.
const (
	OutcomeOK         Outcome = "ok"
	OutcomeRejected   Outcome = "rejected"   // the server answered with an error code
	OutcomeConnection Outcome = "connection" // dial, login, I/O or protocol failure
	OutcomeTimeout    Outcome = "timeout"    // the deadline passed
	OutcomeCancelled  Outcome = "cancelled"  // the caller gave up (its client went away)
)

// OutcomeOf classifies the error a command returned.
func OutcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, context.Canceled):
		return OutcomeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case errors.Is(err, ErrConnection):
		return OutcomeConnection
	}
	if _, ok := CodeOf(err); ok {
		return OutcomeRejected
	}
	return OutcomeConnection // a malformed reply
}

type nopObserver struct{}

func (nopObserver) CommandDone(string, time.Duration, Outcome) {}
func (nopObserver) LoginRejected(error)                        {}

// IsLoginRejected reports whether err is Iggy refusing the login of the account itself (see
// Observer.LoginRejected), as opposed to a failure to reach the server.
func IsLoginRejected(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Op == "login" && isCredentialCode(e.Code)
}
