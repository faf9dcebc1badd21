package listener

import "time"

// Outcome is how a request ended, for metrics.
type Outcome string

// Request outcomes.
const (
	Answered   Outcome = "answered"    // a response was written
	NoResponse Outcome = "no_response" // the handler asked for none (Produce acks=0)
	Invalid    Outcome = "invalid"     // undecodable: answered INVALID_REQUEST
	Rejected   Outcome = "rejected"    // firewall or malformed frame: connection closed
	Failed     Outcome = "failed"      // handler error or write failure: connection closed
	Abandoned  Outcome = "abandoned"   // the connection closed before it was answered
)

// Observer receives connection and request events, for metrics. Its methods are called from
// connection goroutines and must be cheap and safe for concurrent use.
type Observer interface {
	ConnOpened(listener string)
	ConnClosed(listener string)
	// ConnRefused: a connection over MaxConnections was closed on accept.
	ConnRefused(listener string)
	// RequestRead: a frame of frameBytes was read; every RequestRead is followed by exactly
	// one RequestDone.
	RequestRead(listener string, frameBytes int)
	// RequestDone: api is the request's key (any int16 for rejected frames); latency runs
	// from the frame's arrival to its response being written.
	RequestDone(listener string, api int16, latency time.Duration, responseBytes int, outcome Outcome)
}

type nopObserver struct{}

func (nopObserver) ConnOpened(string)                                      {}
func (nopObserver) ConnClosed(string)                                      {}
func (nopObserver) ConnRefused(string)                                     {}
func (nopObserver) RequestRead(string, int)                                {}
func (nopObserver) RequestDone(string, int16, time.Duration, int, Outcome) {}
