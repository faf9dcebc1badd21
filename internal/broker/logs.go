package broker

import "log/slog"

// Kinds of the log lines one request can cause once per partition, topic or resource: each
// is rate-limited on its own (Options.LogLimiter), so a request naming millions of entries
// cannot flood the log; what is suppressed is counted in /metrics (docs/LIMITS.md).
const (
	logProduceRefused    = "produce_partition_refused"
	logProduceLookup     = "produce_topic_lookup_failed"
	logProduceSend       = "produce_send_failed"
	logIdempotentRefused = "produce_idempotent_refused"
	logFetchRead         = "fetch_read_failed"
	logListOffsetsRead   = "list_offsets_read_failed"
	logEpochRead         = "offsets_for_leader_epoch_read_failed"
	logMetadataLookup    = "metadata_topic_lookup_failed"
	logAdminFailed       = "admin_failed"
	logDeleteRecordsRead = "delete_records_read_failed"
	logPartitionPanic    = "partition_panic"
)

// logEntry logs a per-entry line through the rate limiter.
func (b *Broker) logEntry(level slog.Level, kind, msg string, args ...any) {
	b.logLimit.Log(b.log, level, kind, msg, args...)
}
