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
	// Refused: a connection or request was refused for reason (its connection is closed).
	Refused(listener string, reason Refusal)
}

// Refusal is why a connection or request was refused: a small fixed set, for metric labels.
type Refusal string

// Refusal reasons.
const (
	RefusedTooManyConnections Refusal = "too_many_connections" // MaxConnections reached
	RefusedFrameLength        Refusal = "frame_length"         // a frame size outside 1..MaxFrameSize
	RefusedUnsupported        Refusal = "unsupported"          // an API key or version not served
	RefusedMalformed          Refusal = "malformed"            // an undecodable header or body
	RefusedUnauthenticated    Refusal = "unauthenticated"      // a request a SASL listener does not serve before (re-)authentication
	RefusedRequestMemory      Refusal = "request_memory"       // a request that could decode into more than one request may hold
)

// Log event kinds, rate-limited each on its own (Config.LogLimiter).
const (
	eventConnOpened     = "connection_opened"
	eventConnClosed     = "connection_closed"
	eventConnRefused    = "connection_refused"
	eventConnEvicted    = "connection_evicted"
	eventRequestRefused = "request_refused"
)

type nopObserver struct{}

func (nopObserver) ConnOpened(string)                                      {}
func (nopObserver) ConnClosed(string)                                      {}
func (nopObserver) ConnRefused(string)                                     {}
func (nopObserver) RequestRead(string, int)                                {}
func (nopObserver) RequestDone(string, int16, time.Duration, int, Outcome) {}
func (nopObserver) Refused(string, Refusal)                                {}
