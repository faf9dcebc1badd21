package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A real client produces and consumes through a gateway built exactly as the command builds
// it: the request-memory budget is far smaller than what is produced (every request waits for
// the bytes of earlier ones), and the metrics hook counts the requests.
func TestProduceConsumeUnderMemoryBudget(t *testing.T) {
	addr, user, password := testIggy(t)
	g, _ := start(t, nil, bridgeEnv(addr, password,
		"IGGY_KAFKA_IGGY_USERNAME="+user,
		"IGGY_KAFKA_MAX_REQUEST_MEMORY=48KiB",
		"IGGY_KAFKA_IGGY_POOL_SIZE=2",
		"IGGY_KAFKA_METRICS_ADDR=127.0.0.1:0")...)
	ctx := testCtx(t)
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	topic := "budget-" + hex.EncodeToString(suffix[:])
	adm := admin(t, g.kafkaAddr())
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = adm.DeleteTopic(testCtx(t), topic) })

	const records, size = 600, 1 << 10 // 600 KiB through a 48 KiB budget
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, size) }
	producer := kafkaClient(t, g.kafkaAddr(), kgo.ProducerBatchMaxBytes(16<<10), kgo.ProducerLinger(0))
	for i := range records {
		producer.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(i)), Value: value(i)}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce %d: %v", i, err)
			}
		})
	}
	if err := producer.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	consumer := kafkaClient(t, g.kafkaAddr(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	next := map[int32]int64{} // next offset per partition
	got := make([]bool, records)
	for seen := 0; seen < records; {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%d of %d records consumed: %v", seen, records, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			var i int
			if _, err := fmt.Sscan(string(r.Key), &i); err != nil || i < 0 || i >= records || got[i] || !bytes.Equal(r.Value, value(i)) {
				t.Fatalf("record %q at %d/%d: unknown, repeated or with a wrong value", r.Key, r.Partition, r.Offset)
			}
			got[i] = true
			if r.Offset != next[r.Partition] {
				t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
			}
			next[r.Partition]++
			seen++
		})
	}
	waitMetrics(t, g, `api="Produce",listener="PLAINTEXT",outcome="answered"`, `api="Fetch",listener="PLAINTEXT",outcome="answered"`)
}
