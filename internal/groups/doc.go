// Package groups is the classic Kafka consumer-group coordinator: JoinGroup, SyncGroup,
// Heartbeat, LeaveGroup, DescribeGroups, ListGroups and DeleteGroups, plus the membership
// checks that OffsetCommit and OffsetDelete need.
//
// The coordinator follows Apache Kafka's classic group coordinator: a join barrier bounded by
// the rebalance timeout (and the initial rebalance delay for groups that start empty), the
// MEMBER_ID_REQUIRED handshake for JoinGroup v4+, generation bumps when a barrier completes,
// protocol selection by votes among the protocols every member supports, session timeouts,
// pending-sync expiry, and static membership (KIP-345) with FENCED_INSTANCE_ID. Member
// metadata and assignments are opaque bytes relayed verbatim, so any client-side assignor works
// (eager or cooperative).
//
// Each group has its own mutex; nothing blocks while holding it. JoinGroup and SyncGroup park
// the caller until the barrier completes or its context ends. Time comes from an injected
// Clock so tests control it.
//
// Membership lives in memory only (clients rejoin after a restart). Groups that have no members
// are dropped from memory; committed-offset storage (the Stored interface, implemented by the
// offsets package) keeps them visible to DescribeGroups and ListGroups as Empty, like Kafka.
//
// Handler recipe for the offset APIs, which combine this package with the offset store:
//   - OffsetCommit: ValidateOffsetCommit, then store the commits.
//   - OffsetDelete: OffsetDeleteGuard, then delete the partitions it does not protect.
//   - OffsetFetch: classic groups need no membership check.
package groups
