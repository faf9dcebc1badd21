// Package topicstate keeps the Kafka topic state Iggy has no field for: the topic configs the
// gateway stores itself (cleanup.policy, max.message.bytes, message.timestamp.type, ...) and the
// per-partition log start offsets set by DeleteRecords. It lives in an append-only log in
// Iggy (the gateway's reserved stream, topic __topic_state, one partition), so it survives
// restarts and every gateway reading the log sees the same state. See docs/TOPIC-CONFIGS.md.
package topicstate
