package hostile

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The bodies built by repeating one entry are what kmsg encodes for as many entries.
func TestRepeatedEntriesMatchesEncoding(t *testing.T) {
	for _, v := range []int16{3, 9} {
		req := kmsg.NewPtrProduceRequest()
		req.Version = v
		got := repeatedEntries(req, func(n int) { req.Topics = make([]kmsg.ProduceRequestTopic, n) }, 1000)
		req.Topics = make([]kmsg.ProduceRequestTopic, 1000)
		if !bytes.Equal(got, req.AppendTo(nil)) {
			t.Fatalf("v%d differs", v)
		}
	}
	f := kmsg.NewPtrFetchRequest()
	f.Version = 12
	got := repeatedEntries(f, func(n int) {
		f.Topics = []kmsg.FetchRequestTopic{{Topic: "x", Partitions: make([]kmsg.FetchRequestTopicPartition, n)}}
	}, 300)
	f.Topics = []kmsg.FetchRequestTopic{{Topic: "x", Partitions: make([]kmsg.FetchRequestTopicPartition, 300)}}
	if !bytes.Equal(got, f.AppendTo(nil)) {
		t.Fatal("fetch differs")
	}
}
