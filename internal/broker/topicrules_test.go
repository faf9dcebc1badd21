package broker

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// TestMaxMessageBytes: a batch larger than the topic's max.message.bytes is refused with
// MESSAGE_TOO_LARGE; a smaller one is written.
func TestMaxMessageBytes(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	cl, adm := g.kafka(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RecordRetries(0), kgo.DisableIdempotentWrite())
	ctx := ctxT(t)
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"max.message.bytes": kmsg.StringPtr("1000")}, "small"); err != nil {
		t.Fatal(err)
	}
	err := cl.ProduceSync(ctx, &kgo.Record{Topic: "small", Value: bytes.Repeat([]byte("x"), 2000)}).FirstErr()
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("large record: %v, want MESSAGE_TOO_LARGE", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "small", Value: []byte("fits")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestLogAppendTime: on a LogAppendTime topic Fetch returns Iggy's append time with the
// timestamp-type attribute, whatever the producer's timestamps; Produce answers the append
// time; CreateTime topics keep the producer's.
func TestLogAppendTime(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	cl, adm := g.kafka(kgo.DisableIdempotentWrite())
	ctx := ctxT(t)
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"message.timestamp.type": kmsg.StringPtr("LogAppendTime")}, "lat"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "ct"); err != nil {
		t.Fatal(err)
	}
	old := time.UnixMilli(1_000_000)
	before := time.Now().Add(-time.Second)
	for _, topic := range []string{"lat", "ct"} {
		for i := range 3 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte{byte(i)}, Timestamp: old}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// franz-go ignores the produce answer's log_append_time_ms: ask directly.
	var bb kbatch.Builder
	bb.Begin(nil, -1)
	if err := bb.Append(0, old.UnixMilli(), nil, []byte("raw"), nil); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "lat"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = bb.Finish()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || time.UnixMilli(p.LogAppendTime).Before(before) {
		t.Errorf("produce answer: error %d, log append time %d", p.ErrorCode, p.LogAppendTime)
	}
	consumer, _ := g.kafka(kgo.ConsumeTopics("lat", "ct"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := 0
	for seen < 7 {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			seen++
			switch r.Topic {
			case "lat":
				if r.Attrs.TimestampType() != 1 || r.Timestamp.Before(before) || r.Timestamp.After(time.Now().Add(time.Second)) {
					t.Errorf("LogAppendTime record: type %d, timestamp %v", r.Attrs.TimestampType(), r.Timestamp)
				}
			default:
				if r.Attrs.TimestampType() != 0 || !r.Timestamp.Equal(old) {
					t.Errorf("CreateTime record: type %d, timestamp %v", r.Attrs.TimestampType(), r.Timestamp)
				}
			}
		})
	}
}
