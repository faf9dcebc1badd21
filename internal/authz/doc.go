// Package authz decides what an identified Kafka principal (an Iggy user established by SASL
// or a client certificate) may do, from that user's Iggy permissions.
//
// The gateway moves all data over the bridge account's connections, so Iggy itself never sees
// the principal: the decision is made here, from a per-user snapshot of the permissions read
// with GetUser and resolved from Iggy's numeric stream and topic ids to names. Snapshots are
// read again after Cache's refresh interval and soon after a denial, which bounds how long a
// permission changed in Iggy keeps its old effect (docs/SECURITY.md, "Authorization"). Iggy
// reuses the ids of deleted topics, so a per-topic permission is bound to the topic it was
// first seen naming, and DeletedTopic withdraws the permissions on a topic the gateway deletes
// (docs/SECURITY.md, "Reused topic ids").
//
// The rules are Iggy's permissioner: global flags, then per-stream, then per-topic, where
// manage implies read, read_streams and read_topics imply poll, manage_topics implies send,
// and a stream-level grant covers all of the stream's topics.
package authz
