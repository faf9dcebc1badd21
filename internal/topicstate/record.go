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
	if r.Topic == "" {
		return r, fmt.Errorf("%w: no topic", ErrCorrupt)
	}
	switch r.Kind {
	case KindConfigs, KindDelete:
	case KindLogStart:
		for p, off := range r.LogStart {
			if n, err := strconv.ParseInt(p, 10, 32); err != nil || n < 0 || off < 0 {
				return r, fmt.Errorf("%w: log start %q=%d", ErrCorrupt, p, off)
			}
		}
	default:
		return r, fmt.Errorf("%w: kind %q", ErrCorrupt, r.Kind)
	}
	return r, nil
}
