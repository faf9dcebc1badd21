// Package versions is the single source of truth for the Kafka APIs the gateway serves.
//
// The table below is read by the listener's version firewall (through the broker), by the
// ApiVersions response and by the generator of docs/PROTOCOL-COVERAGE.md. A key or version is
// listed only when a handler serves it and tests exercise it: adding an API means adding its
// row here and its handler file in internal/broker (a broker test fails if the two disagree).
package versions

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// API describes one supported Kafka API key.
type API struct {
	Key  int16
	Name string
	// Min and Max bound the versions the gateway decodes and answers. Any other version of a
	// listed key closes the connection (except ApiVersions, see KIP-511).
	Min, Max int16
	// AdvertiseFromV0 makes ApiVersions advertise the key from version 0 although only Min and
	// above are accepted, where clients need it: Produce (librdkafka ≤ 2.x disables compression
	// otherwise, KAFKA-18659) and SaslHandshake (librdkafka needs v0 listed).
	AdvertiseFromV0 bool
	// SASLOnly keys are advertised and accepted only on SASL listeners.
	SASLOnly bool
	// Note explains deviations; it is copied into the coverage document.
	Note string
}

// advertisedMin returns the lowest advertised version.
func (a API) advertisedMin() int16 {
	if a.AdvertiseFromV0 {
		return 0
	}
	return a.Min
}

// Accepts reports whether version v of this API is decoded and served.
func (a API) Accepts(v int16) bool { return v >= a.Min && v <= a.Max }

// table is sorted by key. Keep it sorted: Lookup relies on it and a test checks it.
var table = []API{
	{Key: 0, Name: "Produce", Min: 3, Max: 9, AdvertiseFromV0: true,
		Note: "advertised from v0 for librdkafka (KAFKA-18659); zstd needs v7+ (else 76); transactional batches only in an open transaction that added the partition (else 48/47, docs/TRANSACTIONS.md); acks other than 0/1/-1 → 21"},
	{Key: 1, Name: "Fetch", Min: 4, Max: 12,
		Note: "no fetch sessions: session id 0 always, continuing a session → 70 FETCH_SESSION_ID_NOT_FOUND; read_committed: up to the last stable offset, aborted records left out (aborted_transactions empty), markers as control batches"},
	{Key: 2, Name: "ListOffsets", Min: 1, Max: 7,
		Note: "latest with read_committed: the last stable offset; by timestamp: first record with Kafka timestamp ≥ target, searched from Iggy's append-time lookup; a partition named twice is INVALID_REQUEST at each place, as in Kafka"},
	{Key: 3, Name: "Metadata", Min: 0, Max: 12,
		Note: "topic ids (v10+) derived from the Iggy topic, new when a topic is recreated; lookup by topic id (as consumer-protocol clients do) lists the topics to find it"},
	{Key: 8, Name: "OffsetCommit", Min: 2, Max: 9,
		Note: "stored in Iggy (coordinator log) with metadata and leader epoch; retention time ignored (offsets never expire)"},
	{Key: 9, Name: "OffsetFetch", Min: 1, Max: 9, Note: "v8+ multi-group form"},
	{Key: 10, Name: "FindCoordinator", Min: 0, Max: 6,
		Note: "key type 1 (transaction): this gateway (one gateway only; several → 53); share keys → 42"},
	{Key: 11, Name: "JoinGroup", Min: 0, Max: 9, Note: "classic protocol; static membership (KIP-345) honoured"},
	{Key: 12, Name: "Heartbeat", Min: 0, Max: 4},
	{Key: 13, Name: "LeaveGroup", Min: 0, Max: 5},
	{Key: 14, Name: "SyncGroup", Min: 0, Max: 5},
	{Key: 15, Name: "DescribeGroups", Min: 0, Max: 5, Note: "authorized operations not provided"},
	{Key: 16, Name: "ListGroups", Min: 0, Max: 5, Note: "group types classic and consumer (KIP-848)"},
	{Key: 17, Name: "SaslHandshake", Min: 1, Max: 1, AdvertiseFromV0: true, SASLOnly: true,
		Note: "SASL listeners only; mechanisms PLAIN and OAUTHBEARER (an Iggy personal access token); v0 (unframed tokens) closes the connection"},
	{Key: 18, Name: "ApiVersions", Min: 0, Max: 4,
		Note: "unsupported version → v0 body, error 35 and the full list (KIP-511); no finalized features"},
	{Key: 19, Name: "CreateTopics", Min: 2, Max: 7,
		Note: "configs: retention.*, flush.* and the stored configs of docs/TOPIC-CONFIGS.md (else 40); replication factor 1 up to the Iggy cluster's size, or -1 (else 38); manual assignments only onto this gateway; no topic ids"},
	{Key: 20, Name: "DeleteTopics", Min: 1, Max: 6, Note: "the Iggy stream is kept; by topic id (v6) → 100 UNKNOWN_TOPIC_ID"},
	{Key: 21, Name: "DeleteRecords", Min: 0, Max: 2,
		Note: "raises a durable per-partition log start offset kept by the gateway (topic-state log), honoured by Fetch and ListOffsets; Iggy's messages stay until its retention removes them"},
	{Key: 22, Name: "InitProducerId", Min: 0, Max: 5,
		Note: "transactional id: the id's producer with a new epoch, fencing earlier ones (docs/TRANSACTIONS.md); timeout over 15 min → 50"},
	{Key: 23, Name: "OffsetForLeaderEpoch", Min: 2, Max: 4,
		Note: "epochs bumped on each detected truncation of a partition's log; end offset of the requested epoch (docs/DATA-PATH.md)"},
	{Key: 24, Name: "AddPartitionsToTxn", Min: 0, Max: 3,
		Note: "client form only (v4+ is KIP-890's broker form); all partitions or none: a missing one → 3, the others 55"},
	{Key: 25, Name: "AddOffsetsToTxn", Min: 0, Max: 3},
	{Key: 26, Name: "EndTxn", Min: 0, Max: 3,
		Note: "markers written to every partition, staged offsets applied on commit; v5 (KIP-890 transactions v2) not served"},
	{Key: 28, Name: "TxnOffsetCommit", Min: 0, Max: 3,
		Note: "staged in the transaction, applied to the group's offsets on commit; v3's member checked as OffsetCommit's"},
	{Key: 29, Name: "DescribeAcls", Min: 1, Max: 3,
		Note: "the caller's Iggy permissions as ALLOW bindings (docs/SECURITY.md); unauthenticated connections → 54 SECURITY_DISABLED"},
	{Key: 30, Name: "CreateAcls", Min: 1, Max: 3,
		Note: "every creation → 31 with a message: permissions live in Iggy (advertised so that tools show it)"},
	{Key: 31, Name: "DeleteAcls", Min: 1, Max: 3,
		Note: "every filter → 31 with a message: permissions live in Iggy (advertised so that tools show it)"},
	{Key: 32, Name: "DescribeConfigs", Min: 1, Max: 4,
		Note: "TOPIC: every config of docs/TOPIC-CONFIGS.md with its source; BROKER: the gateway's settings and topic defaults; synonyms and documentation"},
	{Key: 33, Name: "AlterConfigs", Min: 0, Max: 2,
		Note: "replaces a topic's configs, as Kafka; the settable configs of docs/TOPIC-CONFIGS.md (else 40); BROKER configs refused (40)"},
	{Key: 36, Name: "SaslAuthenticate", Min: 0, Max: 2, SASLOnly: true,
		Note: "credentials verified by an Iggy login; session_lifetime_ms when a session lifetime is set (KIP-368 re-authentication, same user only)"},
	{Key: 37, Name: "CreatePartitions", Min: 0, Max: 3, Note: "not an increase → 37; manual assignments only onto this gateway"},
	{Key: 42, Name: "DeleteGroups", Min: 0, Max: 2},
	{Key: 44, Name: "IncrementalAlterConfigs", Min: 0, Max: 1,
		Note: "SET and DELETE of the settable configs of docs/TOPIC-CONFIGS.md; APPEND/SUBTRACT and other configs → 40; BROKER configs refused (40)"},
	{Key: 47, Name: "OffsetDelete", Min: 0, Max: 0},
	{Key: 60, Name: "DescribeCluster", Min: 0, Max: 1},
	{Key: 68, Name: "ConsumerGroupHeartbeat", Min: 0, Max: 1,
		Note: "KIP-848 consumer groups: server-side assignors uniform and range; membership in memory (docs/CONSUMER-GROUPS.md)"},
	{Key: 69, Name: "ConsumerGroupDescribe", Min: 0, Max: 1, Note: "authorized operations not provided"},
}

// Lookup returns the entry for key.
func Lookup(key int16) (API, bool) {
	i, ok := slices.BinarySearchFunc(table, key, func(a API, k int16) int { return int(a.Key) - int(k) })
	if !ok {
		return API{}, false
	}
	return table[i], true
}

// All returns a copy of the table, sorted by key.
func All() []API { return slices.Clone(table) }

// Accepts reports whether key at version is served on a listener (sasl: whether the listener
// uses SASL).
func Accepts(key, version int16, sasl bool) bool {
	a, ok := Lookup(key)
	return ok && (!a.SASLOnly || sasl) && a.Accepts(version)
}

// Advertised returns the ApiVersions entries for a listener: every listed key with its
// advertised range, SASL keys only when sasl is true.
func Advertised(sasl bool) []kmsg.ApiVersionsResponseApiKey {
	out := make([]kmsg.ApiVersionsResponseApiKey, 0, len(table))
	for _, a := range table {
		if a.SASLOnly && !sasl {
			continue
		}
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.Key, a.advertisedMin(), a.Max
		out = append(out, k)
	}
	return out
}
