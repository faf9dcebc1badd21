package testutil

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka requests and record batches as the handler and data-plane tests build them.

// ProduceBatch encodes records as one v2 batch with attributes attrs, compressing the records
// with compress (nil: none).
func ProduceBatch(t testing.TB, attrs int16, values [][]byte, compress func([]byte) []byte) []byte {
	t.Helper()
	var body []byte
	now := time.Now().UnixMilli()
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: v}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		body = r.AppendTo(body)
	}
	if compress != nil {
		body = compress(body)
	}
	return FrameBatch(attrs, now, int32(len(values)), body)
}

// FrameBatch frames body (records, maybe compressed) as a v2 batch with a correct CRC.
func FrameBatch(attrs int16, ts int64, count int32, body []byte) []byte {
	b := kmsg.RecordBatch{
		Length: int32(61 - 12 + len(body)), Magic: 2, Attributes: attrs, LastOffsetDelta: max(count-1, 0),
		FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: count, Records: body,
	}
	raw := b.AppendTo(nil)
	crc := crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli))
	raw[17], raw[18], raw[19], raw[20] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	return raw
}

// GzipBody compresses a batch body with gzip.
func GzipBody(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// ZstdBody compresses a batch body with zstd.
func ZstdBody(b []byte) []byte {
	w, _ := zstd.NewWriter(nil)
	defer w.Close()
	return w.EncodeAll(b, nil)
}

// ProducePartitionReq is a Produce request writing records to one partition.
func ProducePartitionReq(version int16, acks int16, topic string, partition int32, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, acks, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// WithHeader returns a copy of the v2 batch b with its header changed by edit and its CRC
// recomputed, so that only the rule under test is broken.
func WithHeader(b []byte, edit func([]byte)) []byte {
	b = bytes.Clone(b)
	edit(b)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// FetchPartitionsReq builds a Fetch for partitions of one topic, all from offset.
func FetchPartitionsReq(version int16, topic string, offset int64, partitions ...int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxBytes, req.MinBytes, req.MaxWaitMillis = version, 50<<20, 1, 0
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, offset, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// DecodeFetched decodes a Fetch partition's records from offset on, as a client fetching from
// offset does: a batch may begin before it (those from the tail cache do).
func DecodeFetched(p *kmsg.FetchResponseTopicPartition, offset int64) ([]kgo.Record, error) {
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: "t", Partition: p.Partition, Offset: offset}, p, kgo.DefaultDecompressor(), nil)
	if fp.Err != nil && p.ErrorCode == 0 {
		return nil, fmt.Errorf("partition %d: %w", p.Partition, fp.Err)
	}
	out := make([]kgo.Record, len(fp.Records))
	for i, r := range fp.Records {
		out[i] = *r
	}
	return out, nil
}

// ListOffsetsReq is a ListOffsets request for partitions of one topic, all at timestamp (or an
// offset spec: -1 latest, -2 earliest, -3 max timestamp).
func ListOffsetsReq(version int16, topic string, timestamp int64, partitions ...int32) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = version
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, timestamp
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}
