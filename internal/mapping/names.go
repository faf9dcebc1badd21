package mapping

// Header names the gateway writes. They are String-kind Iggy header keys.
const (
	// HeaderVersion marks a message the gateway wrote; its value is the mapping version.
	HeaderVersion = "kafka.v"
	// HeaderKey holds the record key.
	HeaderKey = "kafka.key"
	// HeaderValue says what the placeholder payload stands for: "null" or "empty".
	HeaderValue = "kafka.value"
	// HeaderTimestamp holds the record timestamp (Int64, ms) when the origin timestamp cannot.
	HeaderTimestamp = "kafka.ts"
	// HeaderEnvelope marks an envelope payload; its value is the envelope layout version.
	HeaderEnvelope = "kafka.envelope"
	// HeaderPrefix prefixes every Kafka record header name.
	HeaderPrefix = "kafka.h."

	// The idempotent producer of a batch, on the batch's first message only
	// (docs/STORAGE-FORMAT.md §2.4).

	// HeaderProducerID holds the producer id (Int64).
	HeaderProducerID = "kafka.pid"
	// HeaderProducerEpoch holds the producer epoch (Int16).
	HeaderProducerEpoch = "kafka.epoch"
	// HeaderSequence holds the batch's base sequence (Int32).
	HeaderSequence = "kafka.seq"
	// HeaderRecords holds the number of records in the batch (Int32).
	HeaderRecords = "kafka.count"

	// Transactions (docs/STORAGE-FORMAT.md §2.5, docs/TRANSACTIONS.md).

	// HeaderTransactional marks the first message of a transactional batch (Raw 01), next to
	// its producer headers.
	HeaderTransactional = "kafka.txn"
	// HeaderControl marks a transaction marker message: Raw 00 abort, 01 commit. The marker
	// carries kafka.pid and kafka.epoch of the transaction's producer.
	HeaderControl = "kafka.control"
)

// Versions this build writes and reads.
const (
	MappingVersion  = 1
	EnvelopeVersion = 1
)

// Iggy limits (server constants, not settings).
const (
	// MaxHeaderField is the longest Iggy header key or value; both must be at least 1 byte.
	MaxHeaderField = 255
	// MaxHeadersSize is the largest user-headers block of one message.
	MaxHeadersSize = 100_000
	// MaxPayloadSize is the largest message payload.
	MaxPayloadSize = 64_000_000
)

// placeholder is the payload stored for a null or empty value: Iggy refuses empty payloads.
var placeholder = []byte{0}

var (
	versionValue  = []byte{MappingVersion}
	envelopeValue = []byte{EnvelopeVersion}
	// Values of the kafka.value marker.
	nullMarker  = []byte("null")
	emptyMarker = []byte("empty")
	namespace   = []byte("kafka.")
	prefix      = []byte(HeaderPrefix)
	// legacyEpoch is the kafka.ts value earlier upstream gateways wrote for a 0 ms timestamp.
	legacyEpoch = []byte("epoch")
	// MessageHeadersMin is the least a message's user headers take: the kafka.v entry every
	// message carries. An Iggy batch sized from the records' bytes needs this much more per
	// record, or it grows (and copies itself) while it fills.
	MessageHeadersMin = headerEntrySize(len(HeaderVersion), len(versionValue))
)
