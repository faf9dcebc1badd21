package topicmap

import (
	"crypto/sha256"
	"encoding/binary"
)

// KafkaID is the Kafka topic id (a UUID) of the resolved topic. Iggy has no such id, so it is
// derived from what identifies the Iggy topic: its stream and name, its numeric id and its
// creation time. Every gateway in front of the same Iggy therefore reports the same id, a
// restart keeps it, and a topic deleted and created again under the same name gets a new one,
// which is what clients use topic ids for (docs/CONSUMER-GROUPS.md: the consumer protocol
// names topics by id).
func (r Resolved) KafkaID() [16]byte {
	h := sha256.New()
	h.Write([]byte("iggy-gateway-kafka topic id\x00"))
	h.Write([]byte(r.Kafka))
	h.Write([]byte{0})
	h.Write([]byte(r.Target.Stream))
	h.Write([]byte{0})
	h.Write([]byte(r.Target.Topic))
	var n [12]byte
	binary.BigEndian.PutUint32(n[:4], r.TopicID)
	binary.BigEndian.PutUint64(n[4:], r.CreatedAt)
	h.Write(n[:])
	var id [16]byte
	copy(id[:], h.Sum(nil))
	// A version 8 (custom) UUID of the RFC 9562 variant: never Kafka's reserved zero or one id.
	id[6] = id[6]&0x0f | 0x80
	id[8] = id[8]&0x3f | 0x80
	return id
}
