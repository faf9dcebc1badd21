package broker

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/versions"
)

// groupAPIs are the keys FuzzGroupHandlers drives.
var groupAPIs = []kmsg.Key{kmsg.JoinGroup, kmsg.SyncGroup, kmsg.Heartbeat, kmsg.LeaveGroup, kmsg.DescribeGroups,
	kmsg.ListGroups, kmsg.DeleteGroups, kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.OffsetDelete}

// everyTopicIggy is an Iggy where every topic exists with four partitions.
type everyTopicIggy struct{ iggy.API }

func (everyTopicIggy) GetTopic(_ context.Context, _, topic iggy.Identifier) (*iggy.Topic, error) {
	return &iggy.Topic{ID: 1, Name: topic.Name, PartitionsCount: 4}, nil
}

// fuzzBroker is a broker whose offset store lives in memory, so the fuzzer reaches every path
// of the group and offset handlers without sockets or Iggy.
func fuzzBroker(t testing.TB) *Broker {
	cfg, err := config.Load(nil, []string{"IGGY_KAFKA_BIND_ADDR=127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	scfg := offsets.DefaultConfig(iggylog.NewMem(offsets.DefaultPartitions))
	scfg.Logger = log
	store, err := offsets.New(scfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOffsetStore(store) })
	b, err := New(Options{Config: cfg, Logger: log, Iggy: everyTopicIggy{}, Offsets: store, Groups: fastGroups()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.BeginShutdown)
	return b
}

// FuzzGroupHandlers decodes arbitrary bodies as group and offset requests and serves the ones
// that decode: a handler never panics, always answers at the request's version, and its
// answer encodes. One broker serves every input, so state builds up as in a long-lived
// gateway.
func FuzzGroupHandlers(f *testing.F) {
	for i, key := range groupAPIs {
		a, _ := versions.Lookup(key.Int16())
		for v := a.Min; v <= a.Max; v++ {
			req := kmsg.RequestForKey(key.Int16())
			req.SetVersion(v)
			f.Add(uint8(i), v, req.AppendTo(nil))
		}
	}
	f.Add(uint8(0), int16(9), joinReq(9, "g", "", "t").AppendTo(nil))
	f.Add(uint8(7), int16(9), commitReq(9, "g", "", -1, "t", 1, 0, 3, kmsg.StringPtr("m")).AppendTo(nil))
	f.Add(uint8(8), int16(8), fetchReq(8, "g", "").AppendTo(nil))
	b := fuzzBroker(f)
	cc := &listener.ConnContext{}
	f.Fuzz(func(t *testing.T, which uint8, version int16, body []byte) {
		key := groupAPIs[int(which)%len(groupAPIs)]
		a, _ := versions.Lookup(key.Int16())
		if !a.Accepts(version) {
			return
		}
		req := kmsg.RequestForKey(key.Int16())
		req.SetVersion(version)
		if err := req.ReadFrom(body); err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond) // parked joins give up
		defer cancel()
		resp, err := b.handlers[key.Int16()].Serve(ctx, cc, req)
		if err != nil || resp == nil {
			t.Fatalf("%s v%d: response %v, error %v", key.Name(), version, resp, err)
		}
		if resp.Key() != key.Int16() || resp.GetVersion() != version {
			t.Fatalf("%s v%d answered with %s v%d", key.Name(), version, kmsg.NameForKey(resp.Key()), resp.GetVersion())
		}
		resp.AppendTo(nil)
	})
}
