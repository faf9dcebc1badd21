package offsets

import (
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func sampleRecords() []Record {
	return []Record{
		{Kind: KindCommit, Checkpoint: NoCheckpoint, Time: 1_700_000_000_000, Group: GroupState{Name: "g", Topics: []TopicOffsets{
			{Topic: "t", Partitions: []PartitionOffset{
				{Partition: 0, Committed: Committed{Offset: 0, LeaderEpoch: -1, Metadata: "", CommitTime: 1}},
				{Partition: 7, Committed: Committed{Offset: 1 << 40, LeaderEpoch: 12, Metadata: "meta \x00 data", CommitTime: 2}},
			}},
			{Topic: "u", Partitions: []PartitionOffset{{Partition: 2147483647, Committed: Committed{Offset: -1, LeaderEpoch: 0}}}},
		}}},
		{Kind: KindDeleteOffsets, Checkpoint: 5, Time: 3, Group: GroupState{Name: "g", Topics: []TopicOffsets{
			{Topic: "t", Partitions: []PartitionOffset{{Partition: 0}, {Partition: 7}}},
		}}},
		{Kind: KindDeleteGroup, Checkpoint: 9, Time: 4, Group: GroupState{Name: strings.Repeat("x", 255)}},
		{Kind: KindGeneration, Checkpoint: 0, Time: 5, Group: GroupState{Name: "g", HasGeneration: true, Generation: 42, ProtocolType: "consumer"}},
		{Kind: KindCheckpoint, Checkpoint: NoCheckpoint, Time: 6, CheckpointID: 0xdeadbeef, Seq: 1, Total: 3, Groups: []GroupState{
			{Name: "a", HasGeneration: true, Generation: 3, ProtocolType: "consumer", Topics: []TopicOffsets{
				{Topic: "t", Partitions: []PartitionOffset{{Partition: 1, Committed: Committed{Offset: 10, LeaderEpoch: 2, Metadata: "m", CommitTime: 7}}}},
			}},
			{Name: "", Topics: []TopicOffsets{}},
		}},
		{Kind: KindCheckpoint, Checkpoint: 0, Time: 6, CheckpointID: 1, Seq: 0, Total: 1, Groups: []GroupState{}},
	}
}

// normalize maps nil and empty slices to one form so decoded records compare equal.
func normalize(r *Record) {
	if r.Groups == nil {
		r.Groups = []GroupState{}
	}
	for _, g := range append([]*GroupState{&r.Group}, ptrs(r.Groups)...) {
		if g.Topics == nil {
			g.Topics = []TopicOffsets{}
		}
		for i := range g.Topics {
			if g.Topics[i].Partitions == nil {
				g.Topics[i].Partitions = []PartitionOffset{}
			}
		}
	}
}

func ptrs(gs []GroupState) []*GroupState {
	out := make([]*GroupState, len(gs))
	for i := range gs {
		out[i] = &gs[i]
	}
	return out
}

func TestRecordRoundTrip(t *testing.T) {
	for _, want := range sampleRecords() {
		t.Run(want.Kind.String(), func(t *testing.T) {
			got, err := DecodeRecord(want.encode(nil))
			if err != nil {
				t.Fatal(err)
			}
			normalize(got)
			normalize(&want)
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("round trip\n got %+v\nwant %+v", *got, want)
			}
		})
	}
}

// TestRecordGolden pins the documented byte layout (docs/COORDINATOR-LOG.md): version 2, and
// version 1 (written before owner epochs), which still decodes, as epoch 0.
func TestRecordGolden(t *testing.T) {
	r := Record{Kind: KindCommit, Checkpoint: 2, Time: 3, Epoch: 5, Group: GroupState{Name: "g", Topics: []TopicOffsets{
		{Topic: "t", Partitions: []PartitionOffset{{Partition: 1, Committed: Committed{Offset: 0, LeaderEpoch: -1, Metadata: "m", CommitTime: 4}}}},
	}}}
	const body = "0001" + "67" + "00000001" + // group "g", 1 topic
		"0001" + "74" + "00000001" + // topic "t", 1 partition
		"00000001" + "0000000000000000" + "ffffffff" + "0000000000000004" + "0001" + "6d" // p1 offset 0 epoch -1 time 4 "m"
	const want = "02" + "01" + "0000000000000002" + "0000000000000003" + "0000000000000005" + body // version, kind, checkpoint, time, owner epoch
	b := r.encode(nil)
	if got := hex.EncodeToString(b[:len(b)-crcSize]); got != want {
		t.Fatalf("encoding\n got %s\nwant %s", got, want)
	}
	v1, err := hex.DecodeString("01" + "01" + "0000000000000002" + "0000000000000003" + body)
	if err != nil {
		t.Fatal(err)
	}
	old, err := DecodeRecord(appendCRC(v1, 0))
	if err != nil {
		t.Fatalf("a version 1 record: %v", err)
	}
	r.Epoch = 0
	normalize(old)
	normalize(&r)
	if !reflect.DeepEqual(*old, r) {
		t.Fatalf("version 1 decoded as\n%+v\nwant\n%+v", *old, r)
	}
	fence := Record{Kind: KindFence, Checkpoint: NoCheckpoint, Time: 3, Epoch: 9, Node: 2}
	b = fence.encode(nil)
	if got, want := hex.EncodeToString(b[:len(b)-crcSize]), "0206ffffffffffffffff"+"0000000000000003"+"0000000000000009"+"00000002"; got != want {
		t.Fatalf("fence encoding\n got %s\nwant %s", got, want)
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	valid := sampleRecords()[0].encode(nil)
	reseal := func(body []byte) []byte { return appendCRC(body, 0) } // a body with a correct CRC
	withBody := func(kind Kind, body ...byte) []byte {
		b := append([]byte{recordVersion, byte(kind)}, make([]byte, 24)...)
		return reseal(append(b, body...))
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "shorter than a record"},
		{"bad crc", append(append([]byte(nil), valid[:len(valid)-1]...), valid[len(valid)-1]^1), "CRC-32C"},
		{"future version", reseal(append([]byte{3, 1}, make([]byte, 24)...)), "unknown record version 3"},
		{"fence in version 1", reseal(append([]byte{1, byte(KindFence)}, make([]byte, 20)...)), "fence record in record version 1"},
		{"unknown kind", withBody(99), "unknown record kind 99"},
		{"truncated group", withBody(KindDeleteGroup, 0, 5, 'a'), "truncated"},
		{"trailing bytes", withBody(KindDeleteGroup, 0, 1, 'a', 0), "1 trailing bytes"},
		{"huge topic count", withBody(KindCommit, 0, 0, 0xff, 0xff, 0xff, 0xff), "exceeds the remaining"},
		{"huge partition count", withBody(KindDeleteOffsets, 0, 0, 0, 0, 0, 1, 0, 0, 0x10, 0, 0, 0), "exceeds the remaining"},
		{"chunk seq past total", withBody(KindCheckpoint, append(make([]byte, 8), 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)...), "chunk 2 of 2"},
		{"bad group flags", withBody(KindCheckpoint, append(make([]byte, 8), 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)...), "flags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRecord(tt.in)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want ErrCorrupt containing %q", err, tt.want)
			}
		})
	}
}

func BenchmarkEncodeCommit(b *testing.B) {
	r := sampleRecords()[0]
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = r.encode(buf[:0])
	}
}

func BenchmarkDecodeCommit(b *testing.B) {
	data := sampleRecords()[0].encode(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRecord(data); err != nil {
			b.Fatal(err)
		}
	}
}
