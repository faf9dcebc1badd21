package e2e

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFranzGo runs franz-go (kgo, kadm) against the gateway.
func TestFranzGo(t *testing.T) { runScenarios(t, franzFamily, franzScenarios()) }

// franzScenarios are franz-go's scenarios (the Iggy cluster test runs some of them too).
func franzScenarios() []Scenario {
	scenarios := []Scenario{
		{Name: "metadata", Needs: []Feature{FeatureCore}, Covers: []Cell{CellMetadata}, Run: franzMetadata},
	}
	for _, c := range codecs {
		covers := []Cell{c.cell, CellIdempotence}
		if c.name == "none" {
			covers = append(covers, CellConsume)
		}
		scenarios = append(scenarios, Scenario{Name: "produce-consume-" + c.name,
			Needs: []Feature{FeatureCore, FeatureProduce, c.need, FeatureFetch}, Covers: covers, Run: franzProduceConsume(c.name)})
	}
	scenarios = append(scenarios,
		Scenario{Name: "list-offsets", Needs: []Feature{FeatureCore, FeatureProduce, FeatureListOffsets}, Covers: []Cell{CellConsume}, Run: franzListOffsets},
		Scenario{Name: "group", Needs: []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets, FeatureGroupAdmin},
			Covers: []Cell{CellGroups, CellOffsets}, Run: franzGroup},
		Scenario{Name: "static-membership", Needs: []Feature{FeatureCore, FeatureGroups, FeatureStaticMembership},
			Covers: []Cell{CellStatic}, Run: franzStaticMembership},
		Scenario{Name: "admin", Needs: []Feature{FeatureCore, FeatureCreateTopics, FeatureCreatePartitions, FeatureDeleteTopics, FeatureConfigs},
			Covers: []Cell{CellAdminTopics, CellConfigs}, Run: franzAdmin},
	)
	return scenarios
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func franzMetadata(t *testing.T, env *Env) {
	one, three := env.CreateTopic(t, 1), env.CreateTopic(t, 3)
	ctx := ctxFor(t, 30*time.Second)
	adm := env.Admin(t)
	md, err := adm.Metadata(ctx, one, three)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 1 || md.Brokers[0].NodeID != 1 || fmt.Sprintf("%s:%d", md.Brokers[0].Host, md.Brokers[0].Port) != env.Bootstrap {
		t.Errorf("brokers %+v, want broker 1 at %s", md.Brokers, env.Bootstrap)
	}
	for name, want := range map[string]int{one: 1, three: 3} {
		td, ok := md.Topics[name]
		if !ok || td.Err != nil || len(td.Partitions) != want {
			t.Errorf("topic %s: %+v, want %d partitions without error", name, td, want)
			continue
		}
		for p, pd := range td.Partitions {
			if pd.Leader != 1 || pd.Err != nil || !slices.Equal(pd.Replicas, []int32{1}) {
				t.Errorf("topic %s partition %d: %+v, want leader 1, replicas [1]", name, p, pd)
			}
		}
	}
	versions, err := adm.ApiVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	versions.Each(func(v kadm.BrokerApiVersions) {
		if v.Err != nil {
			t.Errorf("ApiVersions from broker %d: %v", v.NodeID, v.Err)
		}
		for _, k := range env.APIVersions.ApiKeys {
			lo, hi, ok := v.KeyVersions(k.ApiKey)
			if !ok || lo != k.MinVersion || hi != k.MaxVersion {
				t.Errorf("key %d: kadm sees %d..%d (%v), harness probe saw %d..%d", k.ApiKey, lo, hi, ok, k.MinVersion, k.MaxVersion)
			}
		}
	})
}

// franzEdgeRecords are the records whose encoding is easy to get wrong: null and empty keys
// and values, empty and repeated header names and values, long keys and headers, binary
// bytes, a value near 1 MB, explicit timestamps (including 0).
func franzEdgeRecords(topic string) []*kgo.Record {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	bin := []byte{0, 1, 2, 0xff, 0xfe, '\n', 0}
	recs := []*kgo.Record{
		{Key: []byte("k0"), Value: []byte("v0"), Headers: []kgo.RecordHeader{{Key: "h1", Value: []byte("a")}, {Key: "h2", Value: []byte("b")}}},
		{Key: nil, Value: []byte("null key")},
		{Key: []byte{}, Value: []byte("empty key")},
		{Key: []byte("null value"), Value: nil},
		{Key: []byte("empty value"), Value: []byte{}},
		{Key: bin, Value: bin, Headers: []kgo.RecordHeader{{Key: "bin", Value: bin}}},
		{Key: []byte("dup headers"), Value: []byte("x"), Headers: []kgo.RecordHeader{{Key: "d", Value: []byte("1")}, {Key: "d", Value: []byte("2")}, {Key: "e", Value: []byte("3")}, {Key: "d", Value: []byte("4")}}},
		{Key: []byte("empty/null header values"), Value: []byte("x"), Headers: []kgo.RecordHeader{{Key: "empty", Value: []byte{}}, {Key: "null", Value: nil}, {Key: "", Value: []byte("empty name")}}},
		{Key: bytes.Repeat([]byte("K"), 300), Value: []byte("long key"), Headers: []kgo.RecordHeader{{Key: strings.Repeat("n", 300), Value: bytes.Repeat([]byte("v"), 300)}}},
		{Key: []byte("big"), Value: bytes.Repeat([]byte("0123456789"), 100_000)},
		{Key: []byte("epoch"), Value: []byte("timestamp 0"), Timestamp: time.UnixMilli(0)},
	}
	for i, r := range recs {
		r.Topic, r.Partition = topic, 0
		if r.Timestamp.IsZero() {
			r.Timestamp = base.Add(time.Duration(i) * time.Second)
		}
	}
	return recs
}

// franzProduceConsume produces franzEdgeRecords and then 10 000 small records in one batch
// with codec (idempotent producer, the franz-go default), and reads all back byte-exact.
func franzProduceConsume(codec string) func(t *testing.T, env *Env) {
	return func(t *testing.T, env *Env) {
		topic := env.CreateTopic(t, 1)
		compression := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
			"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}[codec]
		producer := env.Kgo(t, kgo.ProducerBatchCompression(compression), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerBatchMaxBytes(2<<20), kgo.ProducerLinger(50*time.Millisecond))
		ctx := ctxFor(t, 60*time.Second)
		want := franzEdgeRecords(topic)
		if err := producer.ProduceSync(ctx, want...).FirstErr(); err != nil {
			t.Fatalf("produce edge records: %v", err)
		}
		for i, r := range want {
			if r.Offset != int64(i) {
				t.Errorf("edge record %d acknowledged at offset %d", i, r.Offset)
			}
		}
		var many []*kgo.Record
		for i := 0; i < 10_000; i++ {
			many = append(many, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "m%d", i), Value: fmt.Appendf(nil, "value %d", i),
				Headers: []kgo.RecordHeader{{Key: "i", Value: fmt.Appendf(nil, "%d", i)}}})
		}
		if err := producer.ProduceSync(ctx, many...).FirstErr(); err != nil {
			t.Fatalf("produce 10 000 records: %v", err)
		}
		want = append(want, many...)

		consumer := env.Kgo(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
			kgo.FetchMaxBytes(4<<20))
		got := pollN(t, ctx, consumer, len(want))
		for i := range want {
			if msg := diffRecord(got[i], want[i], int64(i)); msg != "" {
				t.Errorf("record %d: %s", i, msg)
				if t.Failed() && i > 20 {
					break
				}
			}
		}
	}
}

// pollN polls cl until n records arrived or ctx ends.
func pollN(t *testing.T, ctx context.Context, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records before %v", len(got), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Errorf("fetch %s/%d: %v", topic, p, err) })
		if t.Failed() {
			t.FailNow()
		}
		got = append(got, fs.Records()...)
	}
	return got
}

// diffRecord compares a consumed record with the produced one, bytes exact, nil apart from
// empty for keys and values; "" when equal.
func diffRecord(got, want *kgo.Record, offset int64) string {
	var errs []string
	if got.Partition != want.Partition || got.Offset != offset {
		errs = append(errs, fmt.Sprintf("at %d/%d, want %d/%d", got.Partition, got.Offset, want.Partition, offset))
	}
	if !bytes.Equal(got.Key, want.Key) || (got.Key == nil) != (want.Key == nil) {
		errs = append(errs, fmt.Sprintf("key %s, want %s", short(got.Key), short(want.Key)))
	}
	if !bytes.Equal(got.Value, want.Value) || (got.Value == nil) != (want.Value == nil) {
		errs = append(errs, fmt.Sprintf("value %s, want %s", short(got.Value), short(want.Value)))
	}
	if len(got.Headers) != len(want.Headers) {
		errs = append(errs, fmt.Sprintf("%d headers, want %d", len(got.Headers), len(want.Headers)))
	} else {
		for i := range want.Headers {
			g, w := got.Headers[i], want.Headers[i]
			if g.Key != w.Key || !bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) {
				errs = append(errs, fmt.Sprintf("header %d %q=%s, want %q=%s", i, g.Key, short(g.Value), w.Key, short(w.Value)))
			}
		}
	}
	if !want.Timestamp.IsZero() && !got.Timestamp.Equal(want.Timestamp) {
		errs = append(errs, fmt.Sprintf("timestamp %d, want %d", got.Timestamp.UnixMilli(), want.Timestamp.UnixMilli()))
	}
	return strings.Join(errs, "; ")
}

func short(b []byte) string {
	switch {
	case b == nil:
		return "null"
	case len(b) > 40:
		return fmt.Sprintf("%q...(%d bytes)", b[:40], len(b))
	default:
		return fmt.Sprintf("%q", b)
	}
}

// franzListOffsets: start, end and by-timestamp offsets after three records with known
// timestamps.
func franzListOffsets(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 1)
	ctx := ctxFor(t, 30*time.Second)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var recs []*kgo.Record
	for i := 0; i < 3; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte{byte('a' + i)}, Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	if err := env.Kgo(t).ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := env.Admin(t)
	check := func(what string, list kadm.ListedOffsets, err error, want int64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		o, ok := list.Lookup(topic, 0)
		if !ok || o.Err != nil || o.Offset != want {
			t.Errorf("%s: %+v (found %v), want offset %d", what, o, ok, want)
		}
	}
	start, err := adm.ListStartOffsets(ctx, topic)
	check("start offset", start, err, 0)
	end, err := adm.ListEndOffsets(ctx, topic)
	check("end offset", end, err, 3)
	after, err := adm.ListOffsetsAfterMilli(ctx, base.Add(1500*time.Millisecond).UnixMilli(), topic)
	check("first offset at or after the second record's time + 0.5 s", after, err, 2)
	exact, err := adm.ListOffsetsAfterMilli(ctx, base.Add(time.Second).UnixMilli(), topic)
	check("first offset at the second record's time", exact, err, 1)
}

// franzGroup: two consumers in one group split a four-partition topic, read every record
// exactly once and commit; the admin API shows the group, its members and offsets; when one
// member leaves, the other takes all partitions over.
func franzGroup(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 4)
	group := "g-" + topic
	ctx := ctxFor(t, 90*time.Second)

	type member struct {
		cl       *kgo.Client
		mu       sync.Mutex
		assigned []int32
	}
	newMember := func() *member {
		m := &member{}
		m.cl = env.Kgo(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.Balancers(kgo.RangeBalancer()),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
				m.mu.Lock()
				m.assigned = append(m.assigned, a[topic]...)
				slices.Sort(m.assigned)
				m.mu.Unlock()
			}),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, r map[string][]int32) {
				m.mu.Lock()
				m.assigned = slices.DeleteFunc(m.assigned, func(p int32) bool { return slices.Contains(r[topic], p) })
				m.mu.Unlock()
			}))
		return m
	}
	assignment := func(m *member) []int32 {
		m.mu.Lock()
		defer m.mu.Unlock()
		return slices.Clone(m.assigned)
	}
	a, b := newMember(), newMember()
	members := []*member{a, b}

	// Poll both members (and commit what they read) in the background until the test is done.
	var mu sync.Mutex
	seen := map[string]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, m := range members {
		wg.Add(1)
		go func(m *member) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				fs := pollBriefly(ctx, m.cl)
				mu.Lock()
				for _, r := range fs.Records() {
					seen[string(r.Value)]++
				}
				mu.Unlock()
				if err := m.cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
					t.Errorf("commit: %v", err)
				}
			}
		}(m)
	}
	stopped := false
	stopPolling := func() {
		if !stopped {
			close(stop)
			wg.Wait()
			stopped = true
		}
	}
	defer stopPolling()

	waitFor(t, 30*time.Second, "two members with two partitions each", func() bool {
		union := append(assignment(a), assignment(b)...)
		slices.Sort(union)
		return len(assignment(a)) == 2 && len(assignment(b)) == 2 && slices.Equal(union, []int32{0, 1, 2, 3})
	})

	var recs []*kgo.Record
	for p := int32(0); p < 4; p++ {
		for i := 0; i < 10; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, i)})
		}
	}
	producer := env.Kgo(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := env.Admin(t)
	waitFor(t, 30*time.Second, "offset 10 committed on all four partitions", committedAt(ctx, adm, group, topic, 4, 10))
	mu.Lock()
	if len(seen) != len(recs) {
		t.Errorf("the group read %d distinct records, want %d", len(seen), len(recs))
	}
	for v, n := range seen {
		if n != 1 {
			t.Errorf("record %s read %d times", v, n)
		}
	}
	mu.Unlock()

	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if d := described[group]; d.Err != nil || d.State != "Stable" || len(d.Members) != 2 || d.Protocol != "range" {
		t.Errorf("describe group: state %q, %d members, protocol %q, err %v; want Stable, 2, range", d.State, len(d.Members), d.Protocol, d.Err)
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(listed.Groups(), group) {
		t.Errorf("ListGroups %v lacks %s", listed.Groups(), group)
	}

	// b leaves the group: a takes all four partitions over.
	stopPolling()
	b.cl.Close()
	waitFor(t, 30*time.Second, "the remaining member assigned all four partitions", func() bool {
		pollBriefly(ctx, a.cl)
		return slices.Equal(assignment(a), []int32{0, 1, 2, 3})
	})
}

// franzStaticMembership: a static member (group.instance.id) that restarts within its
// session timeout gets its partitions back without a rebalance: the generation is unchanged.
func franzStaticMembership(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 2)
	group := "g-" + topic
	ctx := ctxFor(t, 60*time.Second)
	join := func() (*kgo.Client, int32) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(env.Bootstrap), kgo.RetryTimeout(30*time.Second), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.InstanceID("static-1"), kgo.SessionTimeout(30*time.Second), kgo.DisableAutoCommit())
		if err != nil {
			t.Fatal(err)
		}
		for {
			pollBriefly(ctx, cl)
			if _, gen := cl.GroupMetadata(); gen > 0 {
				return cl, gen
			}
			if ctx.Err() != nil {
				cl.Close()
				t.Fatal("static member never joined")
			}
		}
	}
	first, gen1 := join()
	first.Close() // a static member does not send LeaveGroup
	second, gen2 := join()
	defer second.Close()
	if gen2 != gen1 {
		t.Errorf("generation went from %d to %d on a static member's restart, want no rebalance", gen1, gen2)
	}
	described, err := env.Admin(t).DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	d := described[group]
	if len(d.Members) != 1 || d.Members[0].InstanceID == nil || *d.Members[0].InstanceID != "static-1" {
		t.Errorf("group members %+v, want the one static member static-1", d.Members)
	}
}

// franzAdmin: create with a config, refuse a duplicate, add partitions, describe and alter
// retention.ms, delete.
func franzAdmin(t *testing.T, env *Env) {
	topic := TopicName(t)
	ctx := ctxFor(t, 60*time.Second)
	adm := env.Admin(t)
	retention := "86400000"
	created, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"retention.ms": &retention}, topic)
	if err != nil || created.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, created.Err)
	}
	if dup, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err == nil && dup.Err == nil {
		t.Errorf("duplicate create succeeded, want TOPIC_ALREADY_EXISTS")
	} else if err == nil && !strings.Contains(dup.Err.Error(), "TOPIC_ALREADY_EXISTS") || err != nil && !strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
		t.Errorf("duplicate create: %v / %v, want TOPIC_ALREADY_EXISTS", err, dup.Err)
	}
	added, err := adm.CreatePartitions(ctx, 2, topic)
	if err == nil {
		err = added.Error()
	}
	if err != nil {
		t.Fatalf("add 2 partitions: %v", err)
	}
	// Kafka propagates the new partitions to its metadata asynchronously.
	waitFor(t, 20*time.Second, "4 partitions listed", func() bool {
		details, err := adm.ListTopics(ctx, topic)
		return err == nil && len(details[topic].Partitions) == 4
	})
	retentionOf := func() string {
		rcs, err := adm.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := rcs.On(topic, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rc.Configs {
			if c.Key == "retention.ms" {
				return c.MaybeValue()
			}
		}
		t.Fatalf("no retention.ms in %+v", rc.Configs)
		return ""
	}
	if got := retentionOf(); got != retention {
		t.Errorf("retention.ms after create %q, want %q", got, retention)
	}
	hour := "3600000"
	altered, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: &hour}}, topic)
	if err == nil {
		_, err = altered.On(topic, nil)
	}
	if err != nil {
		t.Fatalf("alter retention.ms: %v", err)
	}
	if got := retentionOf(); got != hour {
		t.Errorf("retention.ms after alter %q, want %q", got, hour)
	}
	deleted, err := adm.DeleteTopics(ctx, topic)
	if err == nil {
		err = deleted.Error()
	}
	if err != nil {
		t.Fatalf("delete %s: %v", topic, err)
	}
	waitFor(t, 20*time.Second, topic+" no longer listed after delete", func() bool {
		topics, err := adm.ListTopics(ctx)
		return err == nil && !topics.Has(topic)
	})
}

// waitFor polls cond until it holds, failing the test after timeout. It is for what real
// Kafka does asynchronously (metadata propagation); the gateway is expected to pass at once.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for: %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// pollBriefly polls cl for at most 300 ms: long enough for a group member to make progress
// (join, heartbeat, fetch), short enough for a polling loop to notice that it should stop.
func pollBriefly(ctx context.Context, cl *kgo.Client) kgo.Fetches {
	ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	return cl.PollFetches(ctx)
}

// committedAt is a condition for waitFor: group has committed offset at on each of the
// topic's first partitions partitions.
func committedAt(ctx context.Context, adm *kadm.Client, group, topic string, partitions int32, at int64) func() bool {
	return func() bool {
		offsets, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return false
		}
		for p := range partitions {
			if o, ok := offsets.Lookup(topic, p); !ok || o.Err != nil || o.At != at {
				return false
			}
		}
		return true
	}
}
