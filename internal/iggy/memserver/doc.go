// Package memserver is an IN-MEMORY, NOT DURABLE Apache Iggy server for tests and local runs.
//
// It speaks Iggy's binary TCP protocol 0.11.0 (the wire of Iggy server 0.9.x) through the
// shared codec in package wire, closely enough that the official SDKs and the gateway's own
// client cannot tell it from a real server for the commands the gateway uses: login/register
// (password and personal access token), ping, streams, topics, partitions, send and poll,
// consumer offsets, consumer groups, users, permissions and personal access tokens, GetMe and
// GetClusterMetadata. Where this package and a real Iggy 0.9 server disagree, the real server
// is right; the behaviour here follows the Iggy server sources of the 0.9 line (apache/iggy),
// checked with the conformance suite against a real server (internal/iggy).
//
// Everything lives in process memory and is lost when the server stops. Nothing is written to
// disk, nothing is replicated (a cluster's nodes share the one state), and "committed" means
// "applied to the in-memory state".
//
// Crash simulates a crash and restart of a real server: each partition follows its topic's
// flush options (messages_required_to_save, size_of_messages_required_to_save, enforce_fsync)
// to track what the real server would have written to its segment files and fsynced, and a
// crash drops the rest, drops every connection and clamps consumer offsets to the surviving
// log (see durability.go and docs/DURABILITY.md). The segment-full flush trigger is not
// modelled (segments are at least 1 MiB, the default byte threshold).
//
// Deliberate simplifications, all invisible on the wire for well-behaved clients:
//   - message expiry and max topic size are validated, stored and reported, but nothing is ever
//     deleted because of them (a real server deletes only whole sealed 1 GiB segments, which
//     tests never fill);
//   - consumer-group rebalancing moves partitions at once (the real server may delay a move
//     while the previous owner still has polled-but-uncommitted messages);
//   - request deduplication by (client, request) is not implemented: a replayed metadata
//     request is applied again;
//   - the heartbeat verifier (StaleClient eviction) is optional and off unless
//     Config.HeartbeatInterval is set;
//   - TopicHeader option blocks carry the flush options only (explicit when the topic was
//     created with them, derived otherwise); the fixed expiry, size and compression fields
//     carry the other settings;
//   - GetStats, GetSnapshot, GetClient(s), DescribeOptions and DeleteSegments answer
//     FeatureUnavailable (5).
//
// Where the real server would leave a client hanging, this one answers: a frame whose header
// breaks the request rules closes the connection (the real server drops it silently), and a
// SendMessages whose batch does not verify gets its error code as status (4027 frame checksum,
// 4039 batch checksum, 4 otherwise) instead of no reply. Frames must number their messages
// 0..n-1 in offset_delta, as every SDK does.
//
// StartCluster runs several nodes over one state as an Iggy 0.9 cluster looks to clients: one
// primary, backups that refuse writes with TransientNotAccepted and serve reads, a roster with
// roles, and Kill/Restart for failover tests (cluster.go; docs/DEPLOYMENT.md, "In-memory Iggy
// cluster", lists how it differs from a real cluster).
//
// One goroutine serves each connection; all state sits behind one mutex.
package memserver
