// Package dataplane is the gateway's data plane: what Produce, Fetch, ListOffsets,
// OffsetForLeaderEpoch and DeleteRecords do once internal/broker has decoded and authorized
// the request. It owns the state those requests share between them, and its Close.
//
// # Layout
//
//	plane.go         Plane, its options, Storage (what it needs of Iggy) and the shared helpers
//	partitions.go    partition state (high watermarks, log starts, message sizes), produce
//	                 lanes, decode slots, the probes that wake waiting fetches
//	produce.go       the write path: conversion to Iggy batches, lanes, parallel sends
//	idempotence.go   idempotent producers' sequence state, rebuilt from Iggy
//	fetch.go         the read path: the tail cache first (tail.go), then Iggy polls
//	fetchwire.go     the Fetch response encoder that splices cached batches
//	listoffsets.go   ListOffsets, by offset spec and by timestamp
//	epochs.go        leader epochs and OffsetForLeaderEpoch (offsetsforleaderepoch.go)
//	truncation.go    Iggy tails lost after a restart, found and turned into new epochs
//	txn.go           transactions: transactional batches checked against the coordinator,
//	                 markers (the coordinator's Finisher), last stable offsets and aborted
//	                 ranges for read_committed (docs/TRANSACTIONS.md)
//	topicrules.go    the stored topic configs the data path honours, and DeleteRecords'
//	                 log start offsets (deleterecords.go)
//
// # Boundaries
//
// Above it, internal/broker decodes requests, authorizes them, and hands them over through
// one thin handler per API; it asks the Plane for leader epochs (Metadata), tells it of
// deleted topics and reads its tail-cache and producer counters for metrics. Below it, the
// Plane reaches Iggy only through Storage (an *iggy.Client), maps records with
// internal/mapping and internal/kbatch, and maps Iggy errors with internal/kafkacode. It
// uses internal/listener's request context for memory reservations, frame reuse and the
// spliced Fetch answer, never a socket.
//
// Iggy stays the source of truth: answers are built from fresh Iggy reads and confirmations,
// and the state kept here only decides when to read and how much to ask for
// (docs/DATA-PATH.md).
//
// Work fanned out to goroutines of its own (the parallel sends of Produce, the parallel reads
// of Fetch) recovers its panics: the partition is answered UNKNOWN_SERVER_ERROR and the panic
// logged, as the listener does for the handler's goroutine.
package dataplane
