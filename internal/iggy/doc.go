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
// the deadline; TransientNotAccepted (58: not admitted, so safe to send anywhere) is sent again
// while the router checks the cluster's roster, for up to Config.FailoverTimeout.
//
// Clusters: Config.Addr may list several seed nodes of an Iggy cluster. The client reads the
// roster (GetClusterMetadata) after a login, sends everything to the healthy Leader node, and
// finds the primary again when its node refuses or drops connections, answers 58, or the
// roster (read every Config.RosterInterval) names another leader; every connection of the pool
// then moves to the new primary before its next request. It waits through a leaderless window
// for up to Config.FailoverTimeout (10 s). Replays across a move follow the session rules
// above: a SendMessages whose connection dropped after sending is never replayed, and its
// error reports MaybeApplied (router.go; docs/DEPLOYMENT.md).
//
// Consumer-group membership belongs to a session, so a caller that joins groups uses a
// dedicated connection from Client.Acquire; every connection pings the server periodically,
// which keeps such sessions alive.
//
// The data types and the codec live in package wire, which the in-memory server shares; the
// protocol version lives behind one seam there (the login body, the batch header and the
// consumer kinds), so that protocol 0.12.0 (Iggy 0.10) can be added later.
package iggy
