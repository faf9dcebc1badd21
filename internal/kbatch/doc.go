// Package kbatch decodes and encodes Kafka v2 record batches (magic 2).
//
// Decoding is built for the Produce path: Split frames and validates the batches of one
// partition (magic, length, CRC32C) without copying, Batch.Decode decompresses the records
// under a Budget into a pooled buffer and checks their structure and count once, and the
// record iterator then hands out keys, values and headers as sub-slices of that buffer
// without allocating.
//
// Encoding is built for the Fetch path: a Builder appends one uncompressed batch into a
// caller-owned buffer, record by record, and finishes it with the header and CRC.
//
// The package is pure: no I/O, no logging. Errors wrap ErrCorrupt, ErrInvalidRecord or
// ErrBudgetExceeded so callers can map them to Kafka error codes.
package kbatch
