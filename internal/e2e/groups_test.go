package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
)

// Consumer-group scenarios that need several members at once: three members split a
// six-partition topic, one leaves, the other two take its partitions over, and no record is
// lost (issue 5). Each client family runs the same flow with its own assignor.

// TestFranzGoGroups runs the group scenarios with franz-go members.
func TestFranzGoGroups(t *testing.T) {
	runScenarios(t, franzFamily, []Scenario{
		{Name: "group-three-members-cooperative-sticky", Needs: groupDataNeeds, Covers: []Cell{CellGroups, CellOffsets},
			Run: func(t *testing.T, env *Env) { groupRebalance(t, env, "cooperative-sticky", franzMember) }},
		{Name: "group-across-gateway-restart", Needs: groupDataNeeds, Covers: []Cell{CellGroups, CellOffsets},
			Run: franzGroupAcrossRestart},
	})
}

// franzGroupAcrossRestart: two members consume and commit; the gateway restarts under them;
// they rejoin by themselves (their member ids are gone with the old process), resume from the
// committed offsets and read what is produced afterwards. Nothing is lost, and what is read
// twice was read after the last commit before the restart (at-least-once).
func franzGroupAcrossRestart(t *testing.T, _ *Env) {
	env := startRestartableEnv(t)
	topic := env.CreateTopic(t, 4)
	group := "g-" + topic
	ctx := ctxFor(t, 3*time.Minute)
	members := []groupMember{franzMember(t, env, topic, group, 0), franzMember(t, env, topic, group, 1)}
	producer := env.Kgo(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(batch int) {
		for p := int32(0); p < 4; p++ {
			for i := 0; i < 10; i++ {
				r := &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "b%d-p%d-%d", batch, p, i)}
				if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatalf("produce batch %d: %v", batch, err)
				}
			}
		}
	}
	adm := env.Admin(t)
	produce(1)
	waitFor(t, 60*time.Second, "offset 10 committed on all four partitions", committedAt(ctx, adm, group, topic, 4, 10))

	env.restart(t)
	produce(2)
	waitFor(t, 90*time.Second, "offset 20 committed on all four partitions after the restart", committedAt(ctx, adm, group, topic, 4, 20))

	seen := map[string]int{}
	for _, m := range members {
		for _, c := range m.records() {
			if want := fmt.Sprintf("p%d-%d", c.partition, c.offset%10); !strings.HasSuffix(c.value, want) {
				t.Errorf("read %+v: value does not match its partition and offset", c)
			}
			seen[c.value]++
		}
	}
	for batch := 1; batch <= 2; batch++ {
		for p := 0; p < 4; p++ {
			for i := 0; i < 10; i++ {
				v := fmt.Sprintf("b%d-p%d-%d", batch, p, i)
				switch n := seen[v]; {
				case n == 0:
					t.Errorf("record %s was never read", v)
				case n > 1 && batch == 2:
					t.Errorf("record %s, produced after the restart, was read %d times", v, n)
				}
			}
		}
	}
}

// TestJavaGroups runs the group scenarios with the Java console consumer and the
// kafka-consumer-groups tool.
func TestJavaGroups(t *testing.T) {
	runScenarios(t, javaFamily, []Scenario{
		{Name: "group-three-members-cooperative-sticky", Needs: groupDataNeeds, Covers: []Cell{CellGroups, CellOffsets},
			Run: func(t *testing.T, env *Env) { groupRebalance(t, env, "cooperative-sticky", javaMember) }},
		{Name: "static-member-restart", Needs: append(groupDataNeeds, FeatureStaticMembership), Covers: []Cell{CellStatic},
			Run: javaStaticMemberRestart},
		{Name: "consumer-groups-after-gateway-restart", Needs: append(groupDataNeeds, FeatureGroupAdmin), Covers: []Cell{CellOffsets},
			Run: javaConsumerGroupsAfterRestart},
	})
}

// TestKcatGroups runs the group scenarios with kcat -G (librdkafka's balanced consumer).
func TestKcatGroups(t *testing.T) {
	runScenarios(t, kcatFamily, []Scenario{
		{Name: "group-three-members-range", Needs: groupDataNeeds, Covers: []Cell{CellGroups, CellOffsets},
			Run: func(t *testing.T, env *Env) { groupRebalance(t, env, "range", kcatMember) }},
	})
}

// groupDataNeeds are the features a group scenario that produces and consumes needs.
var groupDataNeeds = []Feature{FeatureCore, FeatureProduce, FeatureFetch, FeatureListOffsets, FeatureGroups, FeatureOffsets}

// consumed is one record a group member read.
type consumed struct {
	partition int32
	offset    int64
	value     string
}

// groupMember is one member of a consumer group in a scenario: a client process or an
// in-process franz-go client. It reads the topic from the beginning and commits as it goes.
type groupMember interface {
	records() []consumed
	// leave makes the member leave the group the way a user stops it (the client sends
	// LeaveGroup and commits what it read).
	leave(t *testing.T)
}

// joinFunc starts member i of group on topic.
type joinFunc func(t *testing.T, env *Env, topic, group string, i int) groupMember

// groupRebalance: three members split a six-partition topic (two partitions each, selected
// protocol as asked); records produced to every partition are all read; the third member
// leaves; the other two take its partitions over and read a second batch. No record is lost;
// a record is read twice only on a partition that changed owner (Kafka's at-least-once), and
// the group ends up with every offset committed.
func groupRebalance(t *testing.T, env *Env, protocol string, join joinFunc) {
	topic := env.CreateTopic(t, 6)
	group := "g-" + topic
	ctx := ctxFor(t, 4*time.Minute)
	adm := env.Admin(t)

	var members []groupMember
	for i := 0; i < 3; i++ {
		members = append(members, join(t, env, topic, group, i))
	}
	before := waitGroupSpread(t, ctx, adm, group, topic, 3, protocol)

	producer := env.Kgo(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var produced []consumed
	produce := func(batch int) {
		var recs []*kgo.Record
		for p := int32(0); p < 6; p++ {
			for i := 0; i < 10; i++ {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "b%d-p%d-%d", batch, p, i)})
			}
		}
		results := producer.ProduceSync(ctx, recs...)
		if err := results.FirstErr(); err != nil {
			t.Fatalf("produce batch %d: %v", batch, err)
		}
		for _, r := range results {
			produced = append(produced, consumed{r.Record.Partition, r.Record.Offset, string(r.Record.Value)})
		}
	}
	readAll := func(ms []groupMember) map[consumed]int {
		seen := map[consumed]int{}
		for _, m := range ms {
			for _, c := range m.records() {
				seen[c]++
			}
		}
		return seen
	}
	waitRead := func(what string, ms []groupMember) {
		deadline := time.Now().Add(90 * time.Second)
		for {
			seen := readAll(ms)
			missing := map[int32][]int64{}
			for _, p := range produced {
				if seen[p] == 0 {
					missing[p.partition] = append(missing[p.partition], p.offset)
				}
			}
			if len(missing) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; offsets not read, by partition: %v", what, missing)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	produce(1)
	waitRead("the three members read the first batch", members)

	members[2].leave(t)
	after := waitGroupSpread(t, ctx, adm, group, topic, 2, protocol)
	moved := map[int32]bool{}
	for p, owner := range before {
		if after[p] != owner {
			moved[p] = true
		}
	}
	t.Logf("partition owners before %v, after %v", before, after)
	produce(2)
	waitRead("the two remaining members read the second batch", members) // the third only read before it left

	seen := readAll(members)
	for c, n := range seen {
		switch {
		case !slices.Contains(produced, c):
			t.Errorf("read %+v, which was never produced (wrong partition, offset or value)", c)
		case n > 1 && !moved[c.partition]:
			t.Errorf("read %+v %d times on a partition that kept its owner", c, n)
		case n > 1:
			t.Logf("read %+v %d times (its partition changed owner: at-least-once)", c, n)
		}
	}
	waitFor(t, 60*time.Second, "offset 20 committed on all six partitions", committedAt(ctx, adm, group, topic, 6, 20))
}

// waitGroupSpread waits until group is Stable with n members that split every partition of a
// six-partition topic between them without overlap, with protocol selected, and returns each
// partition's owner (member id).
func waitGroupSpread(t *testing.T, ctx context.Context, adm *kadm.Client, group, topic string, n int, protocol string) map[int32]string {
	t.Helper()
	var owners map[int32]string
	var last string
	deadline := time.Now().Add(90 * time.Second)
	for {
		owners, last = groupSpread(ctx, adm, group, topic, n, protocol)
		if owners != nil {
			return owners
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s never settled on %d members sharing six partitions with protocol %s; last: %s", group, n, protocol, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func groupSpread(ctx context.Context, adm *kadm.Client, group, topic string, n int, protocol string) (map[int32]string, string) {
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return nil, err.Error()
	}
	d := described[group]
	state := fmt.Sprintf("state %s, protocol %s, %d members", d.State, d.Protocol, len(d.Members))
	if d.Err != nil || d.State != "Stable" || d.Protocol != protocol || len(d.Members) != n {
		return nil, state
	}
	owners := map[int32]string{}
	for _, m := range d.Members {
		a, ok := m.Assigned.AsConsumer()
		if !ok {
			return nil, state + ": an assignment is not consumer protocol"
		}
		mine := 0
		for _, at := range a.Topics {
			if at.Topic != topic {
				continue
			}
			for _, p := range at.Partitions {
				if _, dup := owners[p]; dup {
					return nil, fmt.Sprintf("%s: partition %d assigned twice", state, p)
				}
				owners[p] = m.MemberID
				mine++
			}
		}
		if mine == 0 {
			return nil, state + ": a member has no partition"
		}
	}
	if len(owners) != 6 {
		return nil, fmt.Sprintf("%s: %d partitions assigned", state, len(owners))
	}
	return owners, state
}

// franzMember is a franz-go member using its default balancer (cooperative-sticky) that
// commits after every poll.
func franzMember(t *testing.T, env *Env, topic, group string, _ int) groupMember {
	m := &franzGroupMember{stop: make(chan struct{}), done: make(chan struct{})}
	m.cl = env.Kgo(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// Commit what was read before giving partitions away, as an application does.
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) {
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				t.Logf("commit on revoke: %v", err)
			}
		}))
	go m.poll(t)
	t.Cleanup(func() { m.halt() })
	return m
}

type franzGroupMember struct {
	cl   *kgo.Client
	stop chan struct{}
	done chan struct{}
	once sync.Once

	mu   sync.Mutex
	read []consumed
}

func (m *franzGroupMember) poll(t *testing.T) {
	defer close(m.done)
	for {
		select {
		case <-m.stop:
			return
		default:
		}
		fs := pollBriefly(context.Background(), m.cl)
		m.mu.Lock()
		for _, r := range fs.Records() {
			m.read = append(m.read, consumed{r.Partition, r.Offset, string(r.Value)})
		}
		m.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := m.cl.CommitUncommittedOffsets(ctx); err != nil {
			t.Logf("commit: %v", err)
		}
		cancel()
	}
}

func (m *franzGroupMember) halt() {
	m.once.Do(func() { close(m.stop) })
	<-m.done
}

func (m *franzGroupMember) records() []consumed {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.read)
}

func (m *franzGroupMember) leave(t *testing.T) {
	m.halt()
	m.cl.Close() // leaves the group
}

// javaMember is kafka-console-consumer.sh in the group with the cooperative-sticky assignor,
// printing partition and offset with each value.
func javaMember(t *testing.T, env *Env, topic, group string, i int) groupMember {
	c := javaCmd("", "kafka-console-consumer.sh", "--bootstrap-server", env.Bootstrap, "--topic", topic, "--group", group,
		"--from-beginning", "--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true",
		"--command-property", "partition.assignment.strategy=org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
		"--command-property", "auto.commit.interval.ms=1000", "--command-property", "client.id=member-"+strconv.Itoa(i))
	return &processMember{p: startBackground(t, c), parse: parseJavaLine}
}

var javaLine = regexp.MustCompile(`^Partition:(\d+)\tOffset:(\d+)\t(.*)$`)

func parseJavaLine(line string) (consumed, bool) {
	m := javaLine.FindStringSubmatch(line)
	if m == nil {
		return consumed{}, false
	}
	p, _ := strconv.ParseInt(m[1], 10, 32)
	o, _ := strconv.ParseInt(m[2], 10, 64)
	return consumed{int32(p), o, m[3]}, true
}

// kcatMember is kcat -G (librdkafka's balanced consumer, default range assignor).
func kcatMember(t *testing.T, env *Env, topic, group string, _ int) groupMember {
	c := Cmd{Name: "kcat", Args: []string{"-b", env.Bootstrap, "-G", group, "-X", "auto.offset.reset=earliest",
		"-X", "auto.commit.interval.ms=1000", "-u", "-q", "-f", `%p %o %s\n`, topic}}
	return &processMember{p: startBackground(t, c), parse: parseKcatLine}
}

func parseKcatLine(line string) (consumed, bool) {
	f := strings.SplitN(line, " ", 3)
	if len(f) != 3 {
		return consumed{}, false
	}
	p, err1 := strconv.ParseInt(f[0], 10, 32)
	o, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return consumed{}, false
	}
	return consumed{int32(p), o, f[2]}, true
}

// processMember is a consumer process whose output lines are records.
type processMember struct {
	p     *bgProcess
	parse func(string) (consumed, bool)
}

func (m *processMember) records() []consumed {
	var out []consumed
	for _, line := range m.p.lines() {
		if c, ok := m.parse(line); ok {
			out = append(out, c)
		}
	}
	return out
}

func (m *processMember) leave(t *testing.T) { m.p.stop(t) }

// bgProcess is a client program running in the background while a scenario drives it.
type bgProcess struct {
	*childproc.Child
	desc           string
	stdout, stderr *childproc.Output
}

// startBackground starts c without waiting for it. It is killed (with its children) when t
// ends; its output is printed if t failed.
func startBackground(t *testing.T, c Cmd) *bgProcess {
	t.Helper()
	cmd := exec.Command(c.Name, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(cmd.Environ(), c.Env...)
	p := &bgProcess{desc: c.String(), stdout: childproc.NewOutput(4 << 20), stderr: childproc.NewOutput(1 << 20)}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	var err error
	if p.Child, err = childproc.Start(cmd); err != nil {
		t.Fatalf("start %s: %v", p.desc, err)
	}
	t.Logf("$ %s &  # pid %d", p.desc, p.PID())
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("%s\nstdout:\n%s\nstderr:\n%s", p.desc, indent(p.stdout.String()), indent(p.stderr.String()))
		}
	})
	return p
}

// lines returns the complete lines printed so far.
func (p *bgProcess) lines() []string {
	out := p.stdout.String()
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		return strings.Split(out[:i], "\n")
	}
	return nil
}

// stop asks the program to stop as a user would (SIGTERM) and waits for it to exit.
func (p *bgProcess) stop(t *testing.T) {
	t.Helper()
	err := p.Stop(60 * time.Second)
	if errors.Is(err, childproc.ErrNotStopped) {
		t.Fatalf("%s %v", p.desc, err)
	}
	t.Logf("%s stopped: %v", p.desc, err)
}

// javaStaticMemberRestart: a Java consumer with group.instance.id shares a group with a
// franz-go member. Restarted within its session timeout, it comes back to the partitions it
// had and reads them, without a rebalance: the franz-go member stays in its generation and is
// never asked to give up or take partitions.
func javaStaticMemberRestart(t *testing.T, env *Env) {
	topic := env.CreateTopic(t, 4)
	group := "g-" + topic
	ctx := ctxFor(t, 3*time.Minute)
	adm := env.Admin(t)
	const instance = "static-java"
	startJava := func() *processMember {
		c := javaCmd("", "kafka-console-consumer.sh", "--bootstrap-server", env.Bootstrap, "--topic", topic, "--group", group,
			"--from-beginning", "--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true",
			"--command-property", "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor",
			"--command-property", "group.instance.id="+instance, "--command-property", "session.timeout.ms=45000")
		return &processMember{p: startBackground(t, c), parse: parseJavaLine}
	}
	java := startJava()

	var mu sync.Mutex
	var callbacks []string // rebalance callbacks the franz-go member saw
	dynamic := env.Kgo(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.Balancers(kgo.RangeBalancer()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			mu.Lock()
			callbacks = append(callbacks, fmt.Sprintf("assigned %v", a[topic]))
			mu.Unlock()
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, r map[string][]int32) {
			mu.Lock()
			callbacks = append(callbacks, fmt.Sprintf("revoked %v", r[topic]))
			mu.Unlock()
		}))
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			pollBriefly(ctx, dynamic)
		}
	}()
	defer func() { close(stop); <-polled }()

	staticMember := func() (id string, partitions []int32) {
		described, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return "", nil
		}
		d := described[group]
		if d.State != "Stable" || len(d.Members) != 2 {
			return "", nil
		}
		for _, m := range d.Members {
			if m.InstanceID != nil && *m.InstanceID == instance {
				if a, ok := m.Assigned.AsConsumer(); ok {
					for _, at := range a.Topics {
						partitions = append(partitions, at.Partitions...)
					}
				}
				slices.Sort(partitions)
				return m.MemberID, partitions
			}
		}
		return "", nil
	}
	var firstID string
	var staticParts []int32
	waitFor(t, 90*time.Second, "the static Java member and the franz-go member share the four partitions", func() bool {
		firstID, staticParts = staticMember()
		_, gen := dynamic.GroupMetadata()
		return len(staticParts) == 2 && gen > 0
	})
	_, generation := dynamic.GroupMetadata()
	mu.Lock()
	callbacksBefore := len(callbacks)
	mu.Unlock()
	t.Logf("static member %s has partitions %v in generation %d", firstID, staticParts, generation)

	java.leave(t) // a static member does not leave the group when it stops
	if id, parts := staticMember(); id != firstID || !slices.Equal(parts, staticParts) {
		t.Fatalf("after the Java consumer stopped, the static member is %q with %v; want %q kept with %v until its session times out",
			id, parts, firstID, staticParts)
	}
	java = startJava()
	waitFor(t, 90*time.Second, "the restarted Java consumer to take the static member's place", func() bool {
		id, _ := staticMember()
		return id != "" && id != firstID
	})
	if _, parts := staticMember(); !slices.Equal(parts, staticParts) {
		t.Errorf("restarted static member has partitions %v, want its previous %v", parts, staticParts)
	}

	// The restarted consumer reads its partitions: produce to every partition and check who
	// reads what.
	producer := env.Kgo(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := int32(0); p < 4; p++ {
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "after-restart-%d", p)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 60*time.Second, "the restarted Java consumer to read its partitions", func() bool {
		return len(java.records()) == len(staticParts)
	})
	for _, c := range java.records() {
		if !slices.Contains(staticParts, c.partition) || c.value != fmt.Sprintf("after-restart-%d", c.partition) {
			t.Errorf("restarted Java consumer read %+v, want only its partitions %v", c, staticParts)
		}
	}
	if _, gen := dynamic.GroupMetadata(); gen != generation {
		t.Errorf("generation went from %d to %d across the static member's restart, want no rebalance", generation, gen)
	}
	mu.Lock()
	if len(callbacks) != callbacksBefore {
		t.Errorf("the franz-go member saw rebalance callbacks %v after the first assignment", callbacks[callbacksBefore:])
	}
	mu.Unlock()
}

// javaConsumerGroupsAfterRestart: a console consumer commits, a kadm commit carries metadata
// and a leader epoch; the gateway process restarts; kafka-consumer-groups.sh describes the
// committed offsets and lag, resets them, deletes offsets and the group, and the deletion
// survives another restart.
func javaConsumerGroupsAfterRestart(t *testing.T, _ *Env) {
	env := startRestartableEnv(t)
	topic := env.CreateTopic(t, 2)
	group, adminGroup := "g-"+topic, "admin-"+topic
	b := env.Bootstrap
	ctx := ctxFor(t, 4*time.Minute)
	kafkaTool(t, "m1\nm2\nm3\nm4\nm5\n", "kafka-console-producer.sh", "--bootstrap-server", b, "--topic", topic,
		"--command-property", "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner")
	res := kafkaTool(t, "", "kafka-console-consumer.sh", "--bootstrap-server", b, "--topic", topic, "--group", group,
		"--from-beginning", "--max-messages", "5", "--timeout-ms", "30000")
	if got := strings.Fields(res.Stdout); len(got) != 5 {
		t.Fatalf("console consumer printed %q, want the five messages", res.Stdout)
	}
	ends, err := env.Admin(t).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { end[o.Partition] = o.Offset })
	if end[0]+end[1] != 5 {
		t.Fatalf("end offsets %v, want five records in all", end)
	}
	meta := kadm.Offsets{}
	meta.Add(kadm.Offset{Topic: topic, Partition: 0, At: 0, LeaderEpoch: 7, Metadata: "checkpoint 0 of job 42"})
	meta.Add(kadm.Offset{Topic: topic, Partition: 1, At: 1, LeaderEpoch: -1, Metadata: ""})
	if committed, err := env.Admin(t).CommitOffsets(ctx, adminGroup, meta); err != nil || committed.Error() != nil {
		t.Fatalf("commit with metadata: %v %v", err, committed.Error())
	}

	env.restart(t)

	got, err := env.Admin(t).FetchOffsets(ctx, adminGroup)
	if err != nil || got.Error() != nil {
		t.Fatalf("fetch offsets after restart: %v %v", err, got.Error())
	}
	meta.Each(func(want kadm.Offset) {
		o, ok := got.Lookup(want.Topic, want.Partition)
		if !ok || o.At != want.At || o.LeaderEpoch != want.LeaderEpoch || o.Metadata != want.Metadata {
			t.Errorf("after restart %s/%d: %+v, want offset %d, epoch %d, metadata %q", want.Topic, want.Partition, o.Offset, want.At, want.LeaderEpoch, want.Metadata)
		}
	})

	describe := func() map[int32][3]string {
		res := kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--describe", "--group", group)
		rows := map[int32][3]string{}
		for _, m := range groupDescribeRow.FindAllStringSubmatch(res.Stdout, -1) {
			if m[1] == group && m[2] == topic {
				p, _ := strconv.Atoi(m[3])
				rows[int32(p)] = [3]string{m[4], m[5], m[6]}
			}
		}
		return rows
	}
	rows := describe()
	for p := int32(0); p < 2; p++ {
		e := strconv.FormatInt(end[p], 10)
		if want := [3]string{e, e, "0"}; rows[p] != want {
			t.Errorf("--describe after restart, partition %d: current, end, lag %v; want %v", p, rows[p], want)
		}
	}

	kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
	rows = describe()
	for p := int32(0); p < 2; p++ {
		e := strconv.FormatInt(end[p], 10)
		if want := [3]string{"0", e, e}; rows[p] != want {
			t.Errorf("--describe after --reset-offsets --to-earliest, partition %d: %v; want %v", p, rows[p], want)
		}
	}

	res = kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--delete-offsets", "--group", group, "--topic", topic+":0")
	if !regexp.MustCompile(regexp.QuoteMeta(topic) + `\s+0\s+Successful`).MatchString(res.Stdout) {
		t.Errorf("--delete-offsets printed:\n%s", res.Stdout)
	}
	left, err := env.Admin(t).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := left.Lookup(topic, 0); ok {
		t.Errorf("partition 0 still has a committed offset after --delete-offsets: %+v", left)
	}
	if o, ok := left.Lookup(topic, 1); !ok || o.At != 0 {
		t.Errorf("partition 1 lost its committed offset in --delete-offsets of partition 0: %+v", left)
	}

	res = kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--delete", "--group", group)
	if !strings.Contains(res.Stdout, "Deletion of requested consumer groups ('"+group+"') was successful.") {
		t.Errorf("--delete printed:\n%s", res.Stdout)
	}
	env.restart(t)
	res = kafkaTool(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b, "--list")
	listed := strings.Fields(res.Stdout)
	if slices.Contains(listed, group) || !slices.Contains(listed, adminGroup) {
		t.Errorf("--list after deleting %s and restarting: %v; want %s gone and %s kept", group, listed, group, adminGroup)
	}
}
