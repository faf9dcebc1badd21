// Package topicstate keeps the Kafka topic state Iggy has no field for: the topic configs the
// gateway stores itself (cleanup.policy, max.message.bytes, message.timestamp.type, ...) and the
// per-partition log start offsets set by DeleteRecords. It owns that state's record format,
// view and snapshots; the records live in an iggylog.Log (the gateway's reserved stream, topic
// __topic_state, one partition), so they survive restarts and every gateway reading the log
// sees the same state. See docs/TOPIC-CONFIGS.md.
package topicstate
