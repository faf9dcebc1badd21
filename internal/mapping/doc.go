// Package mapping converts Kafka records to Iggy messages and back, exactly as
// docs/STORAGE-FORMAT.md specifies: the value is the payload, the key and the Kafka headers
// are `kafka.`-prefixed user headers, and records Iggy headers cannot hold travel in an
// envelope payload.
//
// The package is pure and knows no Iggy client: an Iggy message here is just an origin
// timestamp, a payload and an encoded user-headers block. Both directions append into
// caller-owned scratch buffers so that, once those have grown, converting a record or a
// message allocates nothing.
package mapping
