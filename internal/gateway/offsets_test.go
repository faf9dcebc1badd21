package gateway

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// Commits survive a gateway restart against the same Iggy: offset 0, metadata and leader
// epoch come back exactly, and the group is listed as Empty.
func TestCommittedOffsetsSurviveRestart(t *testing.T) {
	srv := startIggy(t, "127.0.0.1:0", "iggy")
	ctx := testCtx(t)
	root := dialRoot(t, ctx, srv.Addr())
	if _, err := root.CreateStream(ctx, "kafka"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.CreateTopic(ctx, iggy.Name("kafka"), "orders", 2, iggy.TopicOptions{}); err != nil {
		t.Fatal(err)
	}

	want := kadm.Offsets{}
	want.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 0, LeaderEpoch: 3, Metadata: "first"})
	want.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 42, LeaderEpoch: -1, Metadata: ""})

	first, _ := start(t, nil, bridgeEnv(srv.Addr(), "iggy")...)
	committed, err := admin(t, first.kafkaAddr()).CommitOffsets(ctx, "g", want)
	if err != nil || committed.Error() != nil {
		t.Fatalf("commit: %v %v", err, committed.Error())
	}
	first.Stop()

	second, s := start(t, nil, bridgeEnv(srv.Addr(), "iggy")...)
	adm := admin(t, second.kafkaAddr())
	got, err := adm.FetchOffsets(ctx, "g")
	if err != nil || got.Error() != nil {
		t.Fatalf("fetch: %v %v", err, got.Error())
	}
	want.Each(func(o kadm.Offset) {
		g, ok := got.Lookup(o.Topic, o.Partition)
		if !ok || g.At != o.At || g.LeaderEpoch != o.LeaderEpoch || g.Metadata != o.Metadata {
			t.Errorf("after restart %s/%d: %+v, want %+v", o.Topic, o.Partition, g.Offset, o)
		}
	})
	listed, err := adm.ListGroups(ctx)
	if err != nil || len(listed) != 1 || listed["g"].State != "Empty" {
		t.Errorf("ListGroups after restart: %+v %v", listed, err)
	}
	if logs := s.logs.String(); !strings.Contains(logs, "committed offsets loaded") {
		t.Errorf("log:\n%s", logs)
	}
}
