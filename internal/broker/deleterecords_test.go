package broker

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDeleteRecords: DeleteRecords raises the log start offset durably; ListOffsets EARLIEST,
// Fetch's log_start_offset and OFFSET_OUT_OF_RANGE below it follow, also after a restart.
func TestDeleteRecords(t *testing.T) {
	g := startGateway(t, gatewayOpts{bridge: true})
	cl, adm := g.kafka(kgo.DisableIdempotentWrite(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := ctxT(t)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "purge"); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		for p := range int32(2) {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "purge", Partition: p, Value: []byte{byte(i)}}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "purge", Partition: 0, At: 4})
	os.Add(kadm.Offset{Topic: "purge", Partition: 1, At: -1})
	resps, err := adm.DeleteRecords(ctx, os)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int32]int64{0: 4, 1: 10} {
		r, _ := resps.Lookup("purge", p)
		if r.Err != nil || r.LowWatermark != want {
			t.Errorf("partition %d: low watermark %d, err %v, want %d", p, r.LowWatermark, r.Err, want)
		}
	}
	// Lower offsets change nothing; past the end is OFFSET_OUT_OF_RANGE.
	os = kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "purge", Partition: 0, At: 2})
	os.Add(kadm.Offset{Topic: "purge", Partition: 1, At: 11})
	resps, err = adm.DeleteRecords(ctx, os)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := resps.Lookup("purge", 0); r.Err != nil || r.LowWatermark != 4 {
		t.Errorf("lower offset: %+v", r)
	}
	if r, _ := resps.Lookup("purge", 1); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Errorf("past the end: %+v", r)
	}

	checkStarts := func(b *kgo.Client) {
		t.Helper()
		starts, err := kadm.NewClient(b).ListStartOffsets(ctx, "purge")
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range map[int32]int64{0: 4, 1: 10} {
			if o, _ := starts.Lookup("purge", p); o.Err != nil || o.Offset != want {
				t.Errorf("earliest of %d: %+v, want %d", p, o, want)
			}
		}
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.MaxBytes = 11, 1<<20
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "purge"
		for _, offset := range []int64{3, 4} {
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = 0, offset, 1<<20
			ft.Partitions = append(ft.Partitions, fp)
		}
		req.Topics = append(req.Topics, ft)
		resp, err := req.RequestWith(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		below, at := resp.Topics[0].Partitions[0], resp.Topics[0].Partitions[1]
		if below.ErrorCode != kerr.OffsetOutOfRange.Code || at.ErrorCode != 0 || at.LogStartOffset != 4 || len(at.RecordBatches) == 0 {
			t.Errorf("fetch below: %d; at: error %d, log start %d, %d bytes", below.ErrorCode, at.ErrorCode, at.LogStartOffset, len(at.RecordBatches))
		}
	}
	checkStarts(cl)

	// A consumer starting from the earliest offset reads only what is left.
	consumer, _ := g.kafka(kgo.ConsumeTopics("purge"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < 6 {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			if r.Partition != 0 || r.Offset < 4 {
				t.Errorf("read deleted record %d/%d", r.Partition, r.Offset)
			}
		})
	}

	// A restarted gateway over the same Iggy keeps the log start offsets.
	g2 := startGateway(t, gatewayOpts{restartOf: g})
	cl2, _ := g2.kafka()
	checkStarts(cl2)
}
