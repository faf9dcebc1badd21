// Package epochlog is the leader-epoch log: where a gateway records that a partition's leader
// epoch was bumped after its Iggy log was found truncated (docs/DATA-PATH.md, "Truncation and
// leader epochs"), so that every gateway and every restart sees the same epochs. It owns the
// record format and reading new records once; which epoch a partition is in, and when to bump
// it, is the data plane's business. The storage is an iggylog.Log with one partition.
// Truncations are rare, so the log is small and read whole at startup; it is never compacted.
package epochlog
