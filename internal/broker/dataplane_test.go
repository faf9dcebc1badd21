package broker

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordsEqual compares a consumed record with the produced one: partition, offset, key,
// value (nil apart from empty), headers in order, timestamp.
func recordsEqual(got, want *kgo.Record, offset int64) string {
	var errs []string
	if got.Partition != want.Partition || got.Offset != offset {
		errs = append(errs, fmt.Sprintf("at %d/%d, want %d/%d", got.Partition, got.Offset, want.Partition, offset))
	}
	if !bytes.Equal(got.Key, want.Key) || (got.Key == nil) != (want.Key == nil) {
		errs = append(errs, fmt.Sprintf("key %q (nil %v), want %q (nil %v)", trunc(got.Key), got.Key == nil, trunc(want.Key), want.Key == nil))
	}
	if !bytes.Equal(got.Value, want.Value) || (got.Value == nil) != (want.Value == nil) {
		errs = append(errs, fmt.Sprintf("value %q (nil %v), want %q (nil %v)", trunc(got.Value), got.Value == nil, trunc(want.Value), want.Value == nil))
	}
	if len(got.Headers) != len(want.Headers) {
		errs = append(errs, fmt.Sprintf("headers %v, want %v", got.Headers, want.Headers))
	} else {
		for i := range want.Headers {
			g, w := got.Headers[i], want.Headers[i]
			if g.Key != w.Key || !bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) {
				errs = append(errs, fmt.Sprintf("header %d %q=%q, want %q=%q", i, g.Key, g.Value, w.Key, w.Value))
			}
		}
	}
	if !got.Timestamp.Equal(want.Timestamp) {
		errs = append(errs, fmt.Sprintf("timestamp %d, want %d", got.Timestamp.UnixMilli(), want.Timestamp.UnixMilli()))
	}
	return strings.Join(errs, "; ")
}

func trunc(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}

// consume reads n records of topic/partition from offset with a fresh client.
func (g *gateway) consume(t *testing.T, ctx context.Context, topic string, partition int32, offset int64, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	cl, _ := g.kafka(append([]kgo.Opt{kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(offset)}})}, opts...)...)
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records: %v", len(got), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		got = append(got, fs.Records()...)
	}
	return got
}
