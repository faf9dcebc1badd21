package dataplane

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// flatten lays out the buffer and splices appendFetch returned as they go on the wire.
func flatten(head []byte, splices []listener.Splice) []byte {
	var out []byte
	at := 0
	for _, s := range splices {
		out = append(out, head[at:s.At]...)
		out = append(out, s.Data...)
		at = s.At
	}
	return append(out, head[at:]...)
}

// checkFetchEncoding fails when appendFetch does not produce kmsg's bytes for resp, or
// splices what it need not.
func checkFetchEncoding(t *testing.T, resp *kmsg.FetchResponse) {
	t.Helper()
	if !fetchSpliceable(resp) {
		t.Fatalf("v%d: not spliceable", resp.Version)
	}
	prefix := []byte("head")
	head, splices := appendFetch(append([]byte(nil), prefix...), nil, resp)
	got := flatten(head, splices)
	want := resp.AppendTo(append([]byte(nil), prefix...))
	if !bytes.Equal(got, want) {
		t.Fatalf("v%d: encoding differs from kmsg:\n got %x\nwant %x", resp.Version, got, want)
	}
	for _, s := range splices {
		if len(s.Data) < minSplice {
			t.Fatalf("v%d: spliced %d bytes, under %d", resp.Version, len(s.Data), minSplice)
		}
	}
	back := kmsg.NewPtrFetchResponse()
	back.Version = resp.Version
	if err := back.ReadFrom(got[len(prefix):]); err != nil {
		t.Fatalf("v%d: kmsg cannot read the encoding back: %v", resp.Version, err)
	}
}

// sampleFetch is a response of two topics with partitions of every kind: errors, no
// records, small and large records, aborted transactions, tagged fields.
func sampleFetch(version int16) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	resp.ThrottleMillis, resp.ErrorCode, resp.SessionID = 7, 0, 42
	large := bytes.Repeat([]byte{0xAB}, minSplice+100)
	for ti, name := range []string{"orders", "a-topic-with-a-longer-name"} {
		t := kmsg.NewFetchResponseTopic()
		t.Topic = name
		t.TopicID[0], t.TopicID[15] = byte(ti+1), 9
		for pi := range 5 {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = int32(pi)
			p.HighWatermark, p.LastStableOffset, p.LogStartOffset = 1000+int64(pi), 990, 3
			switch pi {
			case 0:
				p.ErrorCode = 3
				p.HighWatermark, p.LastStableOffset, p.LogStartOffset = -1, -1, -1
			case 1:
				p.RecordBatches = []byte{}
			case 2:
				p.RecordBatches = []byte("small batch")
				p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 5, FirstOffset: 6}}
			case 3:
				p.RecordBatches = large
				p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = 4, 77
				p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 1, 4
				p.SnapshotID.EndOffset, p.SnapshotID.Epoch = 12, 2
				p.PreferredReadReplica = 2
			case 4:
				p.RecordBatches = large[:minSplice]
				p.CurrentLeader.LeaderID = 3
				p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// Every version kmsg knows, which includes every version the gateway advertises.
func TestFetchEncodingMatchesKmsg(t *testing.T) {
	for v := int16(0); v <= kmsg.NewPtrFetchResponse().MaxVersion(); v++ {
		t.Run(fmt.Sprint("v", v), func(t *testing.T) {
			checkFetchEncoding(t, sampleFetch(v))
			empty := kmsg.NewPtrFetchResponse()
			empty.Version = v
			checkFetchEncoding(t, empty)
		})
	}
}

// Responses appendFetch does not encode are left to kmsg.
func TestFetchEncodingRefusesUnknownTags(t *testing.T) {
	resp := sampleFetch(12)
	resp.Topics[1].Partitions[2].UnknownTags.Set(9, []byte{1})
	if fetchSpliceable(resp) || splicedFetch(resp) != nil {
		t.Fatal("a partition with unknown tags is spliceable")
	}
	resp = sampleFetch(12)
	resp.Brokers = append(resp.Brokers, kmsg.NewFetchResponseBroker())
	if fetchSpliceable(resp) {
		t.Fatal("a response with brokers is spliceable")
	}
	resp = sampleFetch(12)
	resp.Version = 99
	if fetchSpliceable(resp) {
		t.Fatal("an unknown version is spliceable")
	}
}

// Arbitrary responses, built from the fuzzer's bytes, encode as kmsg encodes them.
func FuzzFetchEncoding(f *testing.F) {
	f.Add([]byte{12, 2, 3, 0, 5, 1, 2, 3})
	f.Add([]byte{4, 1, 1, 0xff, 0x20, 0, 0})
	f.Add(bytes.Repeat([]byte{7, 1, 0x90}, 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFetchEncoding(t, fetchFromBytes(data))
	})
}

// fetchFromBytes builds a response from data: version, then per topic a partition count and
// per partition a kind byte, a size byte and fields taken from what follows.
func fetchFromBytes(data []byte) *kmsg.FetchResponse {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = int16(next()) % (resp.MaxVersion() + 1)
	resp.ThrottleMillis = int32(next())
	for len(data) > 0 && len(resp.Topics) < 8 {
		t := kmsg.NewFetchResponseTopic()
		t.Topic = string(bytes.Repeat([]byte{'t'}, int(next())%40))
		t.TopicID[3] = next()
		for range int(next()) % 6 {
			p := kmsg.NewFetchResponseTopicPartition()
			kind, size := next(), int(next())
			p.Partition = int32(binary.BigEndian.Uint16([]byte{next(), next()}))
			p.ErrorCode = int16(kind >> 5)
			p.HighWatermark = int64(size) << 20
			if kind&1 != 0 {
				p.RecordBatches = bytes.Repeat([]byte{kind}, size*size)
			}
			if kind&2 != 0 {
				p.AbortedTransactions = make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, int(kind>>2)%3)
			}
			if kind&4 != 0 {
				p.DivergingEpoch.Epoch = int32(size)
			}
			if kind&8 != 0 {
				p.CurrentLeader.LeaderEpoch = int32(size)
			}
			if kind&16 != 0 {
				p.SnapshotID.Epoch = int32(size)
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}
