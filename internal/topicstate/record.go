package topicstate

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
)

// Record kinds. Each record names one Kafka topic and the Iggy topic id it applies to: state
// recorded for an Iggy topic that was later deleted and recreated (a new id) is not carried
// over.
const (
	// KindConfigs replaces the topic's stored configs.
	KindConfigs = "configs"
	// KindLogStart raises the log start offsets of some partitions (never lowers them).
	KindLogStart = "log-start"
	// KindDelete forgets the topic (DeleteTopics).
	KindDelete = "delete"
	// KindSnapshot holds the whole view as of log offset Upto (the records before it), so
	// that a startup reads the log from there instead of from the start (docs/TOPIC-CONFIGS.md).
	KindSnapshot = "snapshot"
)

// recordVersion is the only version this gateway writes and reads.
const recordVersion = 1

// ErrCorrupt is returned for a record that does not decode.
var ErrCorrupt = errors.New("topicstate: corrupt record")

// Record is one entry of the topic-state log. On the wire it is a JSON object followed by
// the CRC-32C (Castagnoli) of the JSON, big-endian, 4 bytes.
type Record struct {
	Version int    `json:"v"`
	Kind    string `json:"kind"`
	Topic   string `json:"topic"`
	TopicID uint32 `json:"topic_id,omitempty"`
	// Configs (KindConfigs) are the stored configs by name.
	Configs map[string]string `json:"configs,omitempty"`
	// LogStart (KindLogStart) are log start offsets by partition (decimal keys).
	LogStart map[string]int64 `json:"log_start,omitempty"`
	// Snapshot is the offset of the latest snapshot the writer knew of (absent: none, or
	// written by a gateway without snapshots). Startup follows it from the last record.
	Snapshot *uint64 `json:"snapshot,omitempty"`
	// Epoch is the controller's owner epoch (KindConfigs, KindDelete): the epoch of
	// coordinator-log partition 0 at its owner, the controller (docs/TOPIC-CONFIGS.md). A
	// configs or delete record below the highest epoch before it in the log was written by a
	// superseded controller and is ignored. In a snapshot, the highest epoch of the records
	// it covers. Absent (0) in records of gateways before epochs, and in log-start records,
	// which only ever raise offsets and so need no fencing.
	Epoch uint64 `json:"epoch,omitempty"`
	// Upto and Topics (KindSnapshot): the view made of the records before offset Upto. Upto
	// may be below the snapshot's own offset when another gateway appended in between: those
	// records are replayed after it.
	Upto   uint64                   `json:"upto,omitempty"`
	Topics map[string]SnapshotTopic `json:"topics,omitempty"`
}

// SnapshotTopic is one topic's state in a snapshot.
type SnapshotTopic struct {
	TopicID  uint32            `json:"topic_id"`
	Configs  map[string]string `json:"configs,omitempty"`
	LogStart map[string]int64  `json:"log_start,omitempty"`
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Encode renders r.
func (r *Record) Encode() []byte {
	r.Version = recordVersion
	b, err := json.Marshal(r)
	if err != nil { // a struct of strings, numbers and maps of them always marshals
		panic(err)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

// Decode parses a record and checks it.
func Decode(data []byte) (Record, error) {
	var r Record
	if len(data) < 4 {
		return r, fmt.Errorf("%w: %d bytes", ErrCorrupt, len(data))
	}
	body, sum := data[:len(data)-4], data[len(data)-4:]
	if crc32.Checksum(body, crcTable) != binary.BigEndian.Uint32(sum) {
		return r, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if r.Version != recordVersion {
		return r, fmt.Errorf("%w: version %d (written by a newer gateway?)", ErrCorrupt, r.Version)
	}
	if r.Topic == "" && r.Kind != KindSnapshot {
		return r, fmt.Errorf("%w: no topic", ErrCorrupt)
	}
	switch r.Kind {
	case KindConfigs, KindDelete:
	case KindLogStart:
		if err := checkLogStart(r.LogStart); err != nil {
			return r, err
		}
	case KindSnapshot:
		for name, st := range r.Topics {
			if name == "" {
				return r, fmt.Errorf("%w: snapshot of a topic without a name", ErrCorrupt)
			}
			if err := checkLogStart(st.LogStart); err != nil {
				return r, err
			}
		}
	default:
		return r, fmt.Errorf("%w: kind %q", ErrCorrupt, r.Kind)
	}
	return r, nil
}

// checkLogStart checks log start offsets keyed by partition.
func checkLogStart(starts map[string]int64) error {
	for p, off := range starts {
		if _, err := parsePartition(p); err != nil || off < 0 {
			return fmt.Errorf("%w: log start %q=%d", ErrCorrupt, p, off)
		}
	}
	return nil
}

// parsePartition parses a partition key of a log start map.
func parsePartition(p string) (int32, error) {
	n, err := strconv.ParseInt(p, 10, 32)
	if err == nil && n < 0 {
		err = fmt.Errorf("negative partition %d", n)
	}
	return int32(n), err
}
