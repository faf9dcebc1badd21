// Package offsets stores Kafka committed offsets (OffsetCommit, OffsetFetch, OffsetDelete,
// DeleteGroups) in Iggy through a coordinator log, so that they survive gateway restarts and
// round-trip exactly: offset 0, metadata string and leader epoch included (Iggy's own
// consumer-offset API can do none of those).
//
// The package owns the coordinator log's records, view, checkpoints and writers; the log itself
// is an iggylog.Log (in production an internal Iggy topic with 16 partitions in
// iggylog.ReservedStream); a group's records go to partition PartitionFor(group). The
// leader-epoch log, which shares the stream, is internal/epochlog. Records are commits, offset deletions, group deletions,
// group generations and periodic checkpoints (a full snapshot of one log partition). The
// current view is kept in memory and rebuilt at startup from the latest checkpoint plus the
// records after it, so startup time does not grow with the age of the log. Each log
// partition has one writer goroutine that appends in order and coalesces queued writes into
// one append (group commit); a write is acknowledged only after the log append succeeded;
// reads are served from memory. Every record carries its writer's owner epoch, and an owner
// takes a partition over with a fence record of a new epoch, so that replay ignores what a
// superseded owner still appended (fence.go). The format is documented in
// docs/COORDINATOR-LOG.md.
//
// A damaged checkpoint makes Load recover from an earlier one (or a full replay) unless
// Config.Recovery is RecoverFail; a corrupt or unknown record stops Load with an error naming
// the log partition and offset unless Config.Recovery is RecoverSkip (an operator's recovery
// switch): then such records are skipped with an error log each.
package offsets
