package offsets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// Record encoding, version 2 (documented in docs/COORDINATOR-LOG.md). All integers are
// big-endian; a string is a u16 length followed by its bytes.
//
//	record  = version:u8 kind:u8 checkpoint:u64 time:i64 epoch:u64 body crc:u32
//	crc     = CRC-32C (Castagnoli) of every byte before it
//
// Version 1 (written before owner epochs) has no epoch field and no checkpoint position; it
// still decodes, as epoch 0, so that an upgraded gateway replays an existing log.
const (
	recordVersion = 2
	recordV1      = 1
	headerSize    = 1 + 1 + 8 + 8 + 8
	crcSize       = 4

	// NoCheckpoint is the checkpoint field of records written before the log partition had
	// a complete checkpoint.
	NoCheckpoint = math.MaxUint64
)

// Kind is a record's type.
type Kind uint8

// Record kinds.
const (
	KindCommit        Kind = 1 // offsets committed for one group
	KindDeleteOffsets Kind = 2 // offsets deleted for one group (OffsetDelete)
	KindDeleteGroup   Kind = 3 // a group and all its state deleted (DeleteGroups)
	KindGeneration    Kind = 4 // a group's latest generation and protocol type
	KindCheckpoint    Kind = 5 // one chunk of a snapshot of the whole log partition
	KindFence         Kind = 6 // an owner took the log partition over with a new epoch
)

func (k Kind) String() string {
	switch k {
	case KindCommit:
		return "commit"
	case KindDeleteOffsets:
		return "delete-offsets"
	case KindDeleteGroup:
		return "delete-group"
	case KindGeneration:
		return "generation"
	case KindCheckpoint:
		return "checkpoint"
	case KindFence:
		return "fence"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Record is one decoded coordinator-log record.
type Record struct {
	Kind Kind
	// Checkpoint is the log offset of the first chunk of the latest complete checkpoint of
	// the record's log partition when the record was written, or NoCheckpoint.
	Checkpoint uint64
	Time       int64 // ms since the Unix epoch
	// Epoch is the owner epoch of the writer (docs/COORDINATOR-LOG.md §7): a fencing token
	// that grows with every change of owner. Replay ignores records of a superseded epoch.
	// Version 1 records have epoch 0.
	Epoch uint64

	// Group is the subject of commit, delete-offsets, delete-group and generation records.
	// Commit records carry offsets, delete-offsets records partition numbers only,
	// generation records Generation and ProtocolType.
	Group GroupState

	// Checkpoint chunks: chunk Seq of Total of the checkpoint CheckpointID.
	CheckpointID uint64
	Seq, Total   uint32
	// At is the log offset the writer expected the checkpoint's first chunk at: a checkpoint
	// found elsewhere was displaced by another writer's records (it may be stale) and is not
	// used as a starting point. NoCheckpoint in version 1 chunks (not known).
	At     uint64
	Groups []GroupState

	// Node is the node id of the gateway that wrote a fence record.
	Node int32
}

// GroupState is a group's stored state, or the part of it a record carries.
type GroupState struct {
	Name          string
	HasGeneration bool
	Generation    int32
	ProtocolType  string
	Topics        []TopicOffsets
}

// TopicOffsets are one topic's partitions of a group.
type TopicOffsets struct {
	Topic      string
	Partitions []PartitionOffset
}

// PartitionOffset is a committed offset of one partition.
type PartitionOffset struct {
	Partition int32
	Committed
}

// Committed is what Kafka stores for a committed offset.
type Committed struct {
	Offset      int64
	LeaderEpoch int32 // -1 when the client did not send one
	Metadata    string
	CommitTime  int64 // ms since the Unix epoch
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("corrupt coordinator log record")

// Sizes of the encoded pieces, used to split records.
const (
	commitEntrySize = 4 + 8 + 4 + 8 + 2 // plus the metadata bytes
	deleteEntrySize = 4
	topicHeaderSize = 2 + 4 // plus the topic name
	groupHeaderSize = 2 + 4 // plus the name (commit and delete-offsets)
	stateHeaderSize = 2 + 1 + 4 + 2 + 4
	checkpointHead  = 8 + 4 + 4 + 8 + 4
)

// encode appends the encoding of r to dst. Strings must not exceed math.MaxUint16 bytes (the
// store checks its inputs).
func (r *Record) encode(dst []byte) []byte { return r.encodeVersion(dst, recordVersion) }

// encodeVersion encodes r in the given record version; version 1 (no epoch, no checkpoint
// position, no fence records) is what gateways before owner epochs wrote, and what tests use
// to build such logs.
func (r *Record) encodeVersion(dst []byte, version byte) []byte {
	start := len(dst)
	dst = append(dst, version, byte(r.Kind))
	dst = binary.BigEndian.AppendUint64(dst, r.Checkpoint)
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.Time))
	if version >= 2 {
		dst = binary.BigEndian.AppendUint64(dst, r.Epoch)
	}
	switch r.Kind {
	case KindCommit:
		dst = appendString(dst, r.Group.Name)
		dst = appendTopics(dst, r.Group.Topics, true)
	case KindDeleteOffsets:
		dst = appendString(dst, r.Group.Name)
		dst = appendTopics(dst, r.Group.Topics, false)
	case KindDeleteGroup:
		dst = appendString(dst, r.Group.Name)
	case KindGeneration:
		dst = appendString(dst, r.Group.Name)
		dst = binary.BigEndian.AppendUint32(dst, uint32(r.Group.Generation))
		dst = appendString(dst, r.Group.ProtocolType)
	case KindCheckpoint:
		dst = binary.BigEndian.AppendUint64(dst, r.CheckpointID)
		dst = binary.BigEndian.AppendUint32(dst, r.Seq)
		dst = binary.BigEndian.AppendUint32(dst, r.Total)
		if version >= 2 {
			dst = binary.BigEndian.AppendUint64(dst, r.At)
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(r.Groups)))
		for i := range r.Groups {
			dst = appendState(dst, &r.Groups[i])
		}
	case KindFence:
		dst = binary.BigEndian.AppendUint32(dst, uint32(r.Node))
	}
	return appendCRC(dst, start)
}

// appendCRC appends the CRC-32C of dst[start:].
func appendCRC(dst []byte, start int) []byte {
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

func appendString(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

func appendState(dst []byte, g *GroupState) []byte {
	dst = appendString(dst, g.Name)
	var flags byte
	if g.HasGeneration {
		flags = 1
	}
	dst = append(dst, flags)
	dst = binary.BigEndian.AppendUint32(dst, uint32(g.Generation))
	dst = appendString(dst, g.ProtocolType)
	return appendTopics(dst, g.Topics, true)
}

func appendTopics(dst []byte, topics []TopicOffsets, withValues bool) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(topics)))
	for _, t := range topics {
		dst = appendString(dst, t.Topic)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(t.Partitions)))
		for _, p := range t.Partitions {
			dst = binary.BigEndian.AppendUint32(dst, uint32(p.Partition))
			if !withValues {
				continue
			}
			dst = binary.BigEndian.AppendUint64(dst, uint64(p.Offset))
			dst = binary.BigEndian.AppendUint32(dst, uint32(p.LeaderEpoch))
			dst = binary.BigEndian.AppendUint64(dst, uint64(p.CommitTime))
			dst = appendString(dst, p.Metadata)
		}
	}
	return dst
}

// DecodeRecord decodes one record. It never allocates more than the input justifies: every
// declared count is checked against the bytes that remain.
func DecodeRecord(b []byte) (*Record, error) {
	if len(b) < headerSize-8+crcSize { // the shortest header: version 1's
		return nil, fmt.Errorf("%w: %d bytes is shorter than a record", ErrCorrupt, len(b))
	}
	body, sum := b[:len(b)-crcSize], binary.BigEndian.Uint32(b[len(b)-crcSize:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return nil, fmt.Errorf("%w: CRC-32C %08x, record says %08x", ErrCorrupt, got, sum)
	}
	version := body[0]
	if version != recordVersion && version != recordV1 {
		return nil, fmt.Errorf("%w: unknown record version %d (written by a newer gateway?)", ErrCorrupt, body[0])
	}
	rd := reader{b: body[2:]}
	r := &Record{Kind: Kind(body[1])}
	r.Checkpoint = rd.u64()
	r.Time = int64(rd.u64())
	if version >= 2 {
		r.Epoch = rd.u64()
	}
	switch r.Kind {
	case KindCommit:
		r.Group.Name = rd.str()
		r.Group.Topics = rd.topics(true)
	case KindDeleteOffsets:
		r.Group.Name = rd.str()
		r.Group.Topics = rd.topics(false)
	case KindDeleteGroup:
		r.Group.Name = rd.str()
	case KindGeneration:
		r.Group.Name = rd.str()
		r.Group.HasGeneration = true
		r.Group.Generation = int32(rd.u32())
		r.Group.ProtocolType = rd.str()
	case KindCheckpoint:
		r.CheckpointID = rd.u64()
		r.Seq = rd.u32()
		r.Total = rd.u32()
		r.At = NoCheckpoint
		if version >= 2 {
			r.At = rd.u64()
		}
		n := rd.count(stateHeaderSize)
		r.Groups = make([]GroupState, 0, n)
		for range n {
			r.Groups = append(r.Groups, rd.state())
		}
		if rd.err == nil && r.Seq >= r.Total {
			rd.fail("checkpoint chunk %d of %d", r.Seq, r.Total)
		}
	case KindFence:
		if version < 2 {
			return nil, fmt.Errorf("%w: a fence record in record version %d", ErrCorrupt, version)
		}
		r.Node = int32(rd.u32())
	default:
		return nil, fmt.Errorf("%w: unknown record kind %d", ErrCorrupt, body[1])
	}
	if rd.err == nil && len(rd.b) != 0 {
		rd.fail("%d trailing bytes", len(rd.b))
	}
	if rd.err != nil {
		return nil, fmt.Errorf("%w: %s record: %v", ErrCorrupt, r.Kind, rd.err)
	}
	return r, nil
}

// reader decodes big-endian fields; after the first error every read returns zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
	r.b = nil
}

func (r *reader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.fail("truncated")
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() uint8 {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if v := r.take(2); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if v := r.take(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func (r *reader) str() string { return string(r.take(int(r.u16()))) }

// count reads an element count and rejects it if the remaining bytes cannot hold that many
// elements of at least minSize bytes each.
func (r *reader) count(minSize int) int {
	n := r.u32()
	if r.err == nil && uint64(n)*uint64(minSize) > uint64(len(r.b)) {
		r.fail("count %d exceeds the remaining %d bytes", n, len(r.b))
		return 0
	}
	return int(n)
}

func (r *reader) topics(withValues bool) []TopicOffsets {
	entry := deleteEntrySize
	if withValues {
		entry = commitEntrySize
	}
	n := r.count(topicHeaderSize)
	topics := make([]TopicOffsets, 0, n)
	for range n {
		t := TopicOffsets{Topic: r.str()}
		m := r.count(entry)
		t.Partitions = make([]PartitionOffset, 0, m)
		for range m {
			p := PartitionOffset{Partition: int32(r.u32())}
			if withValues {
				p.Offset = int64(r.u64())
				p.LeaderEpoch = int32(r.u32())
				p.CommitTime = int64(r.u64())
				p.Metadata = r.str()
			}
			t.Partitions = append(t.Partitions, p)
		}
		topics = append(topics, t)
	}
	return topics
}

func (r *reader) state() GroupState {
	g := GroupState{Name: r.str()}
	switch flags := r.u8(); flags {
	case 0:
	case 1:
		g.HasGeneration = true
	default:
		r.fail("group flags %#x", flags)
	}
	g.Generation = int32(r.u32())
	g.ProtocolType = r.str()
	g.Topics = r.topics(true)
	return g
}
