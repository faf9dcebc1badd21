// Package iggy is a client for Apache Iggy's binary TCP protocol (protocol 0.11.0, Iggy server
// 0.9.x). It knows nothing about Kafka.
//
// A Client is a pool of logged-in connections. Iggy allows one request in flight per
// connection, so concurrency comes from the number of connections. Every call takes a context
// whose deadline bounds the whole exchange (Config.RequestTimeout applies when it has none).
// Errors returned by the server are *Error values carrying the Iggy error code.
//
// Sessions: every connection logs in with a fresh random client id and numbers its requests
// as the server expects (metadata operations advance the counter, reads and partition
// operations reuse it). After an eviction or an I/O error the connection logs in again with a
// new client id. The failed request is replayed on the new session only when that cannot apply
// it twice: it was never sent, the server refused it without executing it, or it is a read, a
// metadata operation or a consumer-offset store. A SendMessages that may have landed is not
// replayed: the caller gets a *ConnError that matches ErrConnection and for which
// MaybeApplied reports true. TransientNotCommitted (57) is resent as the identical frame until
// the deadline and TransientNotAccepted (58) is retried for about two seconds.
//
// Consumer-group membership belongs to a session, so a caller that joins groups uses a
// dedicated connection from Client.Acquire; every connection pings the server periodically,
// which keeps such sessions alive.
//
// The data types and the codec live in package wire, which the in-memory server shares; the
// protocol version lives behind one seam there (the login body, the batch header and the
// consumer kinds), so that protocol 0.12.0 (Iggy 0.10) can be added later.
package iggy
