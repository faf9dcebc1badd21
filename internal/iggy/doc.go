// Package iggy is a client for Apache Iggy's binary TCP protocol (protocol 0.11.0, Iggy server
// 0.9.x). It knows nothing about Kafka.
//
// A Client is a pool of logged-in connections. Iggy allows one request in flight per
// connection, so concurrency comes from the number of connections. Every call takes a context
// whose deadline bounds the whole exchange. Errors returned by the server are *Error values
// carrying the Iggy error code.
//
// The protocol version lives behind one seam (see the wire package): the login body, the batch
// header and the consumer kinds, so that protocol 0.12.0 (Iggy 0.10) can be added later.
package iggy
