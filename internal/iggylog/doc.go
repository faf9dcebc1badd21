// Package iggylog is an append-only, partitioned log of opaque records kept in an Iggy topic:
// the storage under the gateway's internal state (committed offsets in internal/offsets, topic
// configs and log start offsets in internal/topicstate, leader epochs in internal/epochlog).
// It knows nothing of what the records mean: each user owns its record format, its view and
// its recovery. Topic creates its Iggy topic on first use in ReservedStream, with the flush
// mode it is given (docs/DURABILITY.md); Mem is the same log in memory, for tests.
package iggylog
