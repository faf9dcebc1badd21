package topicmap

import "testing"

func TestKafkaIDIsStableAndTellsRecreatedTopicsApart(t *testing.T) {
	r := Resolved{Kafka: "orders", Target: Target{Stream: "kafka", Topic: "orders"}, TopicID: 3, Partitions: 4, CreatedAt: 1000}
	same := r
	if same.KafkaID() != r.KafkaID() {
		t.Fatal("equal topics have different ids")
	}
	more := r
	more.Partitions = 8
	if more.KafkaID() != r.KafkaID() {
		t.Fatal("adding partitions changed the id")
	}
	recreated := r
	recreated.CreatedAt = 2000
	if recreated.KafkaID() == r.KafkaID() {
		t.Fatal("a recreated topic kept its id")
	}
	other := r
	other.Kafka, other.Target.Topic = "payments", "payments"
	if other.KafkaID() == r.KafkaID() {
		t.Fatal("two topics share an id")
	}
	if id := r.KafkaID(); id == ([16]byte{}) || id[6]>>4 != 8 {
		t.Fatalf("not a version 8 UUID: %x", id)
	}
}
