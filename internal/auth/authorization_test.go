package auth_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// tenant is an Iggy user who may manage exactly one topic of the default stream.
type tenant struct {
	name, topic string
	cl          *kgo.Client
	adm         *kadm.Client
}

// startTenants starts a SASL gateway and two tenants, each owning one topic.
func startTenants(t *testing.T, env ...string) (*secureGateway, *tenant, *tenant) {
	g := startSecure(t, []string{"SASL_PLAINTEXT"}, env...)
	ctx := ctxT(t)
	st, err := g.iggy.GetStream(ctx, iggy.Name("kafka"))
	if err != nil {
		t.Fatal(err)
	}
	var ts []*tenant
	for _, name := range []string{"carol", "dave"} {
		topic, err := g.iggy.CreateTopic(ctx, iggy.ID(st.ID), name+"-orders", 2, iggy.TopicOptions{})
		if err != nil {
			t.Fatal(err)
		}
		perms := &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: st.ID,
			Topics: []wire.TopicPermissions{{TopicID: topic.ID, ManageTopic: true}}}}}
		if _, err := g.iggy.CreateUser(ctx, name, name+"-secret", wire.UserActive, perms); err != nil {
			t.Fatal(err)
		}
		cl := g.kafka("SASL_PLAINTEXT", plainAuth(name, name+"-secret"), kgo.RetryTimeout(time.Second))
		ts = append(ts, &tenant{name: name, topic: name + "-orders", cl: cl, adm: kadm.NewClient(cl)})
	}
	return g, ts[0], ts[1]
}

func produce(ctx context.Context, cl *kgo.Client, topic string) error {
	return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
}

// TestTenantBoundary: each tenant produces, consumes and administers its own topic only,
// and sees only it. (Group rules: TestGroupBoundary.)
func TestTenantBoundary(t *testing.T) {
	_, carol, dave := startTenants(t)
	ctx := ctxT(t)
	for _, me := range []*tenant{carol, dave} {
		other := carol
		if me == carol {
			other = dave
		}
		if err := produce(ctx, me.cl, me.topic); err != nil {
			t.Fatalf("%s produce to own topic: %v", me.name, err)
		}
		if err := produce(ctx, me.cl, other.topic); !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Fatalf("%s produce to %s: %v, want 29", me.name, other.topic, err)
		}
		if err := produce(ctx, me.cl, "brand-new"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Fatalf("%s produce to a new topic (auto-create): %v, want 29", me.name, err)
		}
		topics, err := me.adm.ListTopics(ctx)
		if err != nil || !slices.Equal(topics.Names(), []string{me.topic}) {
			t.Fatalf("%s lists %v, %v; want only %s", me.name, topics.Names(), err, me.topic)
		}
		md, err := me.adm.Metadata(ctx, other.topic)
		if !refusedWith(kerr.TopicAuthorizationFailed, err, md.Topics[other.topic].Err) {
			t.Fatalf("%s metadata of %s: %+v, %v; want 29", me.name, other.topic, md.Topics[other.topic], err)
		}
		if lo, err := me.adm.ListEndOffsets(ctx, other.topic); !refusedWith(kerr.TopicAuthorizationFailed, err, lo.Error()) {
			t.Fatalf("%s end offsets of %s: %v", me.name, other.topic, lo.Error())
		}
		cr, err := me.adm.CreateTopic(ctx, 1, 1, nil, me.name+"-extra")
		if !refusedWith(kerr.TopicAuthorizationFailed, err, cr.Err) {
			t.Fatalf("%s create topic: %+v, %v; want 29", me.name, cr, err)
		}
		dr, err := me.adm.DeleteTopics(ctx, other.topic)
		if !refusedWith(kerr.TopicAuthorizationFailed, err, dr[other.topic].Err) {
			t.Fatalf("%s delete %s: %+v, %v; want 29", me.name, other.topic, dr, err)
		}
		ac, err := me.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kmsgStr("1000")}}, other.topic)
		if len(ac) != 1 || !refusedWith(kerr.TopicAuthorizationFailed, err, ac[0].Err) {
			t.Fatalf("%s alter %s: %+v, %v; want 29", me.name, other.topic, ac, err)
		}
		pr, err := me.adm.CreatePartitions(ctx, 1, other.topic)
		if !refusedWith(kerr.TopicAuthorizationFailed, err, pr[other.topic].Err) {
			t.Fatalf("%s create partitions of %s: %+v, %v; want 29", me.name, other.topic, pr, err)
		}
		if _, err := me.adm.CreatePartitions(ctx, 1, me.topic); err != nil {
			t.Fatalf("%s create partitions of own topic: %v", me.name, err)
		}
	}

}

func kmsgStr(s string) *string { return &s }

// refusedWith reports whether the request error or the per-item error is code (kadm reports a
// per-item error either way, depending on the call).
func refusedWith(code error, errs ...error) bool {
	return slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, code) })
}

// TestRevocationBound: a permission removed in Iggy stops the next request once the refresh
// interval has passed, on the same connection.
func TestRevocationBound(t *testing.T) {
	const interval = 300 * time.Millisecond
	g, carol, _ := startTenants(t, "IGGY_KAFKA_AUTHZ_REFRESH_INTERVAL="+interval.String())
	ctx := ctxT(t)
	if err := produce(ctx, carol.cl, carol.topic); err != nil {
		t.Fatalf("before revocation: %v", err)
	}
	if err := g.iggy.UpdatePermissions(ctx, iggy.Name("carol"), nil); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	time.Sleep(interval) // the bound under test: after it, the old grant must be gone
	err := produce(ctx, carol.cl, carol.topic)
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce %v after revocation: %v, want 29", time.Since(revoked), err)
	}
}

// commit commits offset 1 of partition 0 of topics to group.
func commit(ctx context.Context, adm *kadm.Client, group string, topics ...string) (kadm.OffsetResponses, error) {
	var os kadm.Offsets
	for _, topic := range topics {
		os.Add(kadm.Offset{Topic: topic, Partition: 0, At: 1, LeaderEpoch: -1})
	}
	return adm.CommitOffsets(ctx, group, os)
}

// TestGroupBoundary: with the default group ACLs each tenant owns the groups named after it
// ("carol." and what follows); the other tenant's group is closed (30), offsets of topics a
// tenant cannot poll are refused per topic (29) even in its own group, and ListGroups shows
// each tenant only the groups it may describe.
func TestGroupBoundary(t *testing.T) {
	_, carol, dave := startTenants(t)
	ctx := ctxT(t)
	for _, me := range []*tenant{carol, dave} {
		if err := produce(ctx, me.cl, me.topic); err != nil {
			t.Fatal(err)
		}
		if resp, err := commit(ctx, me.adm, me.name+".group", me.topic); err != nil || resp.Error() != nil {
			t.Fatalf("%s commits to its own group: %v %v", me.name, err, resp.Error())
		}
	}
	carolGroup := "carol.group"

	// dave cannot fetch, commit to, delete offsets of, describe or delete carol's group.
	if _, err := dave.adm.FetchOffsets(ctx, carolGroup); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("dave fetches carol's offsets: %v, want 30", err)
	}
	if resp, err := commit(ctx, dave.adm, carolGroup, dave.topic); !refusedWith(kerr.GroupAuthorizationFailed, err, resp.Error()) {
		t.Fatalf("dave commits to carol's group: %v %v, want 30", err, resp.Error())
	}
	if _, err := dave.adm.DeleteOffsets(ctx, carolGroup, kadm.TopicsSet{carol.topic: {0: {}}}); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("dave deletes carol's offsets: %v, want 30", err)
	}
	if dr, err := dave.adm.DeleteGroups(ctx, carolGroup); !refusedWith(kerr.GroupAuthorizationFailed, err, dr[carolGroup].Err) {
		t.Fatalf("dave deletes carol's group: %+v %v, want 30", dr, err)
	}
	if dg, err := dave.adm.DescribeGroups(ctx, carolGroup); !refusedWith(kerr.GroupAuthorizationFailed, err, dg[carolGroup].Err) {
		t.Fatalf("dave describes carol's group: %+v %v, want 30", dg, err)
	}

	// carol's own group: offsets of dave's topic are refused per topic (29). (kadm drops topics
	// its metadata does not show before asking, hence the raw request.)
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = carolGroup, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = dave.topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Offset = 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	cresp, err := req.RequestWith(ctx, carol.cl)
	if err != nil || len(cresp.Topics) != 1 || cresp.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("carol commits dave's topic: %+v %v, want 29", cresp, err)
	}
	dr, err := carol.adm.DeleteOffsets(ctx, carolGroup, kadm.TopicsSet{dave.topic: {0: {}}})
	if perr, _ := dr.Lookup(dave.topic, 0); !refusedWith(kerr.TopicAuthorizationFailed, err, perr) {
		t.Fatalf("carol deletes offsets of dave's topic: %+v %v, want 29", dr, err)
	}
	fetched, err := carol.adm.FetchOffsets(ctx, carolGroup)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup(carol.topic, 0); !ok || o.At != 1 {
		t.Fatalf("carol's committed offset: %+v %v", o, ok)
	}
	if _, ok := fetched.Lookup(dave.topic, 0); ok {
		t.Fatalf("carol's group lists an offset of dave's topic: %+v", fetched)
	}

	// ListGroups: each tenant sees its own group only.
	for _, me := range []*tenant{carol, dave} {
		listed, err := me.adm.ListGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := listed.Groups(); !slices.Equal(got, []string{me.name + ".group"}) {
			t.Errorf("%s lists groups %v", me.name, got)
		}
	}

	// carol may delete her offsets and her group.
	if _, err := carol.adm.DeleteOffsets(ctx, carolGroup, kadm.TopicsSet{carol.topic: {0: {}}}); err != nil {
		t.Fatalf("carol deletes her offsets: %v", err)
	}
	if resp, err := commit(ctx, carol.adm, carolGroup, carol.topic); err != nil || resp.Error() != nil {
		t.Fatalf("carol commits again: %v %v", err, resp.Error())
	}
	if dr, err := carol.adm.DeleteGroups(ctx, carolGroup); err != nil || dr.Error() != nil {
		t.Fatalf("carol deletes her group: %+v %v", dr, err)
	}
}

// A tenant that deletes its own topic does not inherit the next topic the operator creates in
// the stream, although Iggy gives that topic the freed id: the gateway withdraws the per-topic
// permissions on a topic it deletes from Iggy's users, so the grant survives neither in Iggy
// nor in a gateway that never saw the old topic.
func TestDeletedTopicGrantsDoNotPassToItsSuccessor(t *testing.T) {
	g, carol, dave := startTenants(t)
	ctx := ctxT(t)
	old, err := g.iggy.GetTopic(ctx, iggy.Name("kafka"), iggy.Name(carol.topic))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := carol.adm.DeleteTopics(ctx, carol.topic)
	if err != nil || resp[carol.topic].Err != nil {
		t.Fatalf("carol deletes her topic: %v %v", err, resp[carol.topic].Err)
	}
	u, err := g.iggy.GetUser(ctx, iggy.Name(carol.name))
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range u.Permissions.Streams {
		for _, tp := range sp.Topics {
			if tp.TopicID == old.ID {
				t.Fatalf("Iggy still grants carol topic id %d after its deletion: %+v", old.ID, u.Permissions)
			}
		}
	}
	if !strings.Contains(g.log.String(), "withdrew the permissions on a deleted topic") {
		t.Errorf("no log line for the withdrawn permissions:\n%s", g.log)
	}
	st, err := g.iggy.GetStream(ctx, iggy.Name("kafka"))
	if err != nil {
		t.Fatal(err)
	}
	next, err := g.iggy.CreateTopic(ctx, iggy.ID(st.ID), "erin-payroll", 1, iggy.TopicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if next.ID != old.ID {
		t.Logf("the new topic got id %d, not the freed %d", next.ID, old.ID)
	}
	// Carol, on a fresh connection and client, can neither write to nor see the new topic;
	// dave keeps his own topic.
	cl := g.kafka("SASL_PLAINTEXT", plainAuth(carol.name, carol.name+"-secret"), kgo.RetryTimeout(time.Second))
	if err := produce(ctx, cl, "erin-payroll"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("carol produces to the topic that got her old id: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if err := produce(ctx, dave.cl, dave.topic); err != nil {
		t.Errorf("dave: %v", err)
	}
}
