package dataplane

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
)

// The Fetch response encoder behind vectored writes (docs/PERFORMANCE.md, "Vectored
// writes"): the same bytes as kmsg's FetchResponse.AppendTo, except that record batches of
// at least minSplice bytes are not copied into the buffer but handed to the listener as
// splices, written from the partition's own buffer (pooled, or shared with the tail cache).
// Checked byte for byte against kmsg at every version (fetchwire_test.go).

// minSplice is the smallest record batches worth an iovec of their own: smaller ones are
// cheaper to copy.
const minSplice = 4 << 10

// fetchSpliceable reports whether appendFetch encodes resp: kmsg's versions, and no
// unknown tagged fields or brokers (the gateway never sets them) anywhere.
func fetchSpliceable(resp *kmsg.FetchResponse) bool {
	if resp.Version < 0 || resp.Version > resp.MaxVersion() || resp.UnknownTags.Len() > 0 || len(resp.Brokers) > 0 {
		return false
	}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.UnknownTags.Len() > 0 {
			return false
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.UnknownTags.Len() > 0 || p.DivergingEpoch.UnknownTags.Len() > 0 ||
				p.CurrentLeader.UnknownTags.Len() > 0 || p.SnapshotID.UnknownTags.Len() > 0 {
				return false
			}
			for k := range p.AbortedTransactions {
				if p.AbortedTransactions[k].UnknownTags.Len() > 0 {
					return false
				}
			}
		}
	}
	return true
}

// splicedFetch is resp's listener.Response.AppendSpliced, or nil when appendFetch does not
// encode it.
func splicedFetch(resp *kmsg.FetchResponse) func([]byte, []listener.Splice) ([]byte, []listener.Splice) {
	if !fetchSpliceable(resp) {
		return nil
	}
	return func(dst []byte, splices []listener.Splice) ([]byte, []listener.Splice) {
		return appendFetch(dst, splices, resp)
	}
}

// appendFetch encodes resp (fetchSpliceable) after dst, splicing large record batches.
func appendFetch(dst []byte, splices []listener.Splice, resp *kmsg.FetchResponse) ([]byte, []listener.Splice) {
	w := fetchWriter{dst: dst, splices: splices, version: resp.Version, flexible: resp.Version >= 12}
	if w.version >= 1 {
		w.int32(resp.ThrottleMillis)
	}
	if w.version >= 7 {
		w.int16(resp.ErrorCode)
		w.int32(resp.SessionID)
	}
	w.arrayLen(len(resp.Topics))
	for i := range resp.Topics {
		w.topic(&resp.Topics[i])
	}
	if w.flexible {
		w.dst = append(w.dst, 0) // no tagged fields
	}
	return w.dst, w.splices
}

type fetchWriter struct {
	dst      []byte
	splices  []listener.Splice
	version  int16
	flexible bool
}

func (w *fetchWriter) topic(t *kmsg.FetchResponseTopic) {
	if w.version <= 12 {
		w.string(t.Topic)
	} else {
		w.dst = append(w.dst, t.TopicID[:]...)
	}
	w.arrayLen(len(t.Partitions))
	for i := range t.Partitions {
		w.partition(&t.Partitions[i])
	}
	if w.flexible {
		w.dst = append(w.dst, 0)
	}
}

func (w *fetchWriter) partition(p *kmsg.FetchResponseTopicPartition) {
	w.int32(p.Partition)
	w.int16(p.ErrorCode)
	w.int64(p.HighWatermark)
	if w.version >= 4 {
		w.int64(p.LastStableOffset)
	}
	if w.version >= 5 {
		w.int64(p.LogStartOffset)
	}
	if w.version >= 4 {
		w.abortedTransactions(p.AbortedTransactions)
	}
	if w.version >= 11 {
		w.int32(p.PreferredReadReplica)
	}
	w.records(p.RecordBatches)
	if w.flexible {
		w.partitionTags(p)
	}
}

func (w *fetchWriter) abortedTransactions(txns []kmsg.FetchResponseTopicPartitionAbortedTransaction) {
	switch {
	case txns == nil && w.flexible:
		w.dst = append(w.dst, 0)
	case txns == nil:
		w.int32(-1)
	default:
		w.arrayLen(len(txns))
	}
	for i := range txns {
		w.int64(txns[i].ProducerID)
		w.int64(txns[i].FirstOffset)
		if w.flexible {
			w.dst = append(w.dst, 0)
		}
	}
}

// records writes the nullable bytes field of the record batches, splicing them when large.
func (w *fetchWriter) records(b []byte) {
	switch {
	case b == nil && w.flexible:
		w.dst = append(w.dst, 0)
		return
	case b == nil:
		w.int32(-1)
		return
	case w.flexible:
		w.dst = binary.AppendUvarint(w.dst, uint64(len(b))+1)
	default:
		w.int32(int32(len(b)))
	}
	if len(b) < minSplice {
		w.dst = append(w.dst, b...)
		return
	}
	w.splices = append(w.splices, listener.Splice{At: len(w.dst), Data: b})
}

// partitionTags writes the tagged fields kmsg writes when they differ from their defaults:
// 0 DivergingEpoch, 1 CurrentLeader, 2 SnapshotID, each its size and fields (and no tags of
// its own).
func (w *fetchWriter) partitionTags(p *kmsg.FetchResponseTopicPartition) {
	diverging := p.DivergingEpoch.Epoch != -1 || p.DivergingEpoch.EndOffset != -1
	leader := p.CurrentLeader.LeaderID != -1 || p.CurrentLeader.LeaderEpoch != -1
	snapshot := p.SnapshotID.EndOffset != -1 || p.SnapshotID.Epoch != -1
	n := 0
	for _, set := range []bool{diverging, leader, snapshot} {
		if set {
			n++
		}
	}
	w.dst = binary.AppendUvarint(w.dst, uint64(n))
	if diverging {
		w.dst = append(w.dst, 0, 4+8+1)
		w.int32(p.DivergingEpoch.Epoch)
		w.int64(p.DivergingEpoch.EndOffset)
		w.dst = append(w.dst, 0)
	}
	if leader {
		w.dst = append(w.dst, 1, 4+4+1)
		w.int32(p.CurrentLeader.LeaderID)
		w.int32(p.CurrentLeader.LeaderEpoch)
		w.dst = append(w.dst, 0)
	}
	if snapshot {
		w.dst = append(w.dst, 2, 8+4+1)
		w.int64(p.SnapshotID.EndOffset)
		w.int32(p.SnapshotID.Epoch)
		w.dst = append(w.dst, 0)
	}
}

func (w *fetchWriter) int16(v int16) { w.dst = binary.BigEndian.AppendUint16(w.dst, uint16(v)) }
func (w *fetchWriter) int32(v int32) { w.dst = binary.BigEndian.AppendUint32(w.dst, uint32(v)) }
func (w *fetchWriter) int64(v int64) { w.dst = binary.BigEndian.AppendUint64(w.dst, uint64(v)) }

func (w *fetchWriter) arrayLen(n int) {
	if w.flexible {
		w.dst = binary.AppendUvarint(w.dst, uint64(n)+1)
	} else {
		w.int32(int32(n))
	}
}

func (w *fetchWriter) string(s string) {
	if w.flexible {
		w.dst = binary.AppendUvarint(w.dst, uint64(len(s))+1)
	} else {
		w.int16(int16(len(s)))
	}
	w.dst = append(w.dst, s...)
}
