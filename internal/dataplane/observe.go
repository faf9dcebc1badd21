package dataplane

import "encoding/binary"

// DataObserver learns what the data path moved, per Kafka topic, for metrics. Its methods are
// called on handler goroutines and must be cheap and safe for concurrent use.
type DataObserver interface {
	// Produced: records of bytes (as stored in Iggy) were written to topic.
	Produced(topic string, records, bytes int)
	// Fetched: records in bytes of Kafka batches were read from topic for a consumer.
	Fetched(topic string, records, bytes int)
}

type nopDataObserver struct{}

func (nopDataObserver) Produced(string, int, int) {}
func (nopDataObserver) Fetched(string, int, int)  {}

// observeFetched reports the records of a fetch's answer: one v2 batch per partition, whose
// record count sits at bytes 57..61 of its header.
func (dp *Plane) observeFetched(f *fetchRequest) {
	for ti := range f.topics {
		ft := &f.topics[ti]
		records, bytes := 0, 0
		for _, fp := range f.parts[ft.start:ft.end] {
			if rb := fp.out.RecordBatches; len(rb) >= 61 {
				records += int(binary.BigEndian.Uint32(rb[57:61]))
				bytes += len(rb)
			}
		}
		if bytes > 0 {
			dp.observer.Fetched(ft.kafka, records, bytes)
		}
	}
}
