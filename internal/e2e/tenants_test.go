package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// The tenant scenario (docs/SECURITY.md, "Authorization"): two Iggy users, each owning a
// stream of its own that the topic map exposes as one Kafka topic, over SASL_PLAINTEXT.

// tenantRefresh is AUTHZ_REFRESH_INTERVAL of the tenant gateway: the revocation bound.
const tenantRefresh = time.Second

// e2eTenant is an Iggy user who may manage its own stream, and the Kafka topic mapped there.
type e2eTenant struct {
	user, password string
	stream         string
	topic          string // Kafka name
	group          string
}

// setupTenants creates two streams, each with one topic, and a user managing each, and
// returns them with a topic map file exposing the topics under Kafka names.
func setupTenants(t *testing.T, env *Env) (a, b *e2eTenant, topicMap string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := env.iggy.iggyClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var suffix [4]byte
	rand.Read(suffix[:])
	run := hex.EncodeToString(suffix[:])
	mapping := fmt.Sprintf("default_stream = %q\n", kafkaStream)
	var ts []*e2eTenant
	for _, name := range []string{"a", "b"} {
		ten := &e2eTenant{stream: "tenant-" + name + "-" + run, topic: "tenant-" + name + "-" + run + "-orders"}
		st, err := cl.CreateStream(ctx, ten.stream)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.CreateTopic(ctx, iggy.ID(st.ID), "orders", 2, iggy.TopicOptions{}); err != nil {
			t.Fatal(err)
		}
		ten.user, ten.password = iggyUser(t, env, &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: st.ID, ManageStream: true}}})
		ten.group = ownGroup(ten.user, "orders") // the default group ACLs give each user its own
		mapping += fmt.Sprintf("[topics.%q]\nstream = %q\ntopic = \"orders\"\n", ten.topic, ten.stream)
		ts = append(ts, ten)
	}
	topicMap = filepath.Join(t.TempDir(), "topics.toml")
	if err := os.WriteFile(topicMap, []byte(mapping), 0o600); err != nil {
		t.Fatal(err)
	}
	return ts[0], ts[1], topicMap
}

func TestSecurityTenants(t *testing.T) {
	if testing.Short() && !required() {
		t.Skip("end-to-end scenarios do not run in -short mode")
	}
	base := sharedEnv(t)
	if base.External() {
		t.Skip("needs a gateway started by the harness")
	}
	a, b, topicMap := setupTenants(t, base)
	env := secureEnv(t, nil, nil, "IGGY_KAFKA_SASL_ENABLED=true", "IGGY_KAFKA_TOPIC_MAP_PATH="+topicMap,
		"IGGY_KAFKA_AUTHZ_REFRESH_INTERVAL="+tenantRefresh.String())
	pairs := [][2]*e2eTenant{{a, b}, {b, a}}

	t.Run("franz-go", func(t *testing.T) {
		securityScenario(t, franzFamily, CellSASL)
		for _, p := range pairs {
			tenantFranzOwn(t, env, p[0], p[1])
		}
		for _, p := range pairs { // each has committed offsets now
			tenantFranzGroups(t, env, p[0], p[1])
		}
	})
	t.Run("kcat", func(t *testing.T) {
		securityScenario(t, kcatFamily, CellSASL)
		for _, p := range pairs {
			tenantKcat(t, env, p[0], p[1])
		}
	})
	t.Run("java", func(t *testing.T) {
		securityScenario(t, javaFamily, CellSASL)
		for _, p := range pairs {
			tenantJavaACLs(t, env, p[0], p[1])
		}
		// An anonymous (PLAINTEXT) connection has nothing to describe.
		anon := runCmd(t, javaCmd("", "kafka-acls.sh", "--bootstrap-server", base.Bootstrap, "--list"))
		if out := anon.Stdout + anon.Stderr; !strings.Contains(out, "SecurityDisabledException") || !strings.Contains(out, "not authenticated") {
			t.Errorf("kafka-acls --list over PLAINTEXT: exit %d\n%s", anon.ExitCode, indent(out))
		}
	})
	t.Run("revocation", func(t *testing.T) {
		securityScenario(t, franzFamily, CellSASL)
		tenantRevocation(t, env, base, a)
	})
}

func (ten *e2eTenant) kgo(t *testing.T, env *Env, opts ...kgo.Opt) *kgo.Client {
	return env.Kgo(t, append([]kgo.Opt{kgo.SASL(plain.Auth{User: ten.user, Pass: ten.password}.AsMechanism()),
		kgo.RetryTimeout(2 * time.Second), kgo.RecordRetries(2)}, opts...)...)
}

func produceOne(ctx context.Context, cl *kgo.Client, topic, value string) error {
	return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr()
}

func refused(code error, errs ...error) bool {
	return slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, code) })
}

// tenantFranzOwn: me produces and consumes (in a group) its own topic, sees only it, and can
// neither write to nor administer other's.
func tenantFranzOwn(t *testing.T, env *Env, me, other *e2eTenant) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := me.kgo(t, env)
	adm := kadm.NewClient(cl)
	if err := produceOne(ctx, cl, me.topic, "for-"+me.user); err != nil {
		t.Fatalf("%s produces to its topic: %v", me.user, err)
	}
	if err := produceOne(ctx, cl, other.topic, "intruder"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("%s produces to %s: %v, want 29", me.user, other.topic, err)
	}
	consumer := me.kgo(t, env, kgo.ConsumerGroup(me.group), kgo.ConsumeTopics(me.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	fs := consumer.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatalf("%s consumes its topic: %v", me.user, err)
	}
	if recs := fs.Records(); len(recs) == 0 || string(recs[0].Value) != "for-"+me.user {
		t.Fatalf("%s consumed %v", me.user, recs)
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("%s commits: %v", me.user, err)
	}
	consumer.Close() // leaves the group

	topics, err := adm.ListTopics(ctx)
	if err != nil || !slices.Equal(topics.Names(), []string{me.topic}) {
		t.Fatalf("%s lists topics %v (%v), want only %s", me.user, topics.Names(), err, me.topic)
	}
	md, err := adm.Metadata(ctx, other.topic)
	if !refused(kerr.TopicAuthorizationFailed, err, md.Topics[other.topic].Err) {
		t.Fatalf("%s metadata of %s: %+v %v, want 29", me.user, other.topic, md.Topics[other.topic], err)
	}
	for _, name := range []string{me.user + "-elsewhere", other.topic} {
		cr, err := adm.CreateTopic(ctx, 1, 1, nil, name)
		if !refused(kerr.TopicAuthorizationFailed, err, cr.Err) {
			t.Fatalf("%s creates %s: %+v %v, want 29", me.user, name, cr, err)
		}
	}
	dr, err := adm.DeleteTopics(ctx, other.topic)
	if !refused(kerr.TopicAuthorizationFailed, err, dr[other.topic].Err) {
		t.Fatalf("%s deletes %s: %+v %v, want 29", me.user, other.topic, dr, err)
	}
	retention := "60000"
	ac, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: &retention}}, other.topic)
	if len(ac) != 1 || !refused(kerr.TopicAuthorizationFailed, err, ac[0].Err) {
		t.Fatalf("%s alters %s: %+v %v, want 29", me.user, other.topic, ac, err)
	}
	pr, err := adm.CreatePartitions(ctx, 1, other.topic)
	if !refused(kerr.TopicAuthorizationFailed, err, pr[other.topic].Err) {
		t.Fatalf("%s adds partitions to %s: %+v %v, want 29", me.user, other.topic, pr, err)
	}
}

// tenantFranzGroups: me cannot see, read, commit into, delete offsets of or delete other's
// group.
func tenantFranzGroups(t *testing.T, env *Env, me, other *e2eTenant) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(me.kgo(t, env))
	listed, err := adm.ListGroups(ctx)
	if err != nil || slices.Contains(listed.Groups(), other.group) || !slices.Contains(listed.Groups(), me.group) {
		t.Fatalf("%s lists groups %v (%v): want its own, not %s", me.user, listed.Groups(), err, other.group)
	}
	if _, err := adm.FetchOffsets(ctx, other.group); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("%s fetches %s's offsets: %v, want 30", me.user, other.group, err)
	}
	if _, err := adm.DeleteOffsets(ctx, other.group, kadm.TopicsSet{other.topic: {0: {}, 1: {}}}); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("%s deletes %s's offsets: %v, want 30", me.user, other.group, err)
	}
	dg, err := adm.DeleteGroups(ctx, other.group)
	if !refused(kerr.GroupAuthorizationFailed, err, dg[other.group].Err) {
		t.Fatalf("%s deletes group %s: %+v %v, want 30", me.user, other.group, dg, err)
	}
	var squat kadm.Offsets // its own topic's offset, into the other's group name
	squat.Add(kadm.Offset{Topic: me.topic, Partition: 0, At: 0, LeaderEpoch: -1})
	if cr, err := adm.CommitOffsets(ctx, other.group, squat); !refused(kerr.GroupAuthorizationFailed, err, cr.Error()) {
		t.Fatalf("%s commits into %s: %v %v, want 30", me.user, other.group, err, cr.Error())
	}
	own, err := adm.FetchOffsets(ctx, me.group)
	if err != nil || len(own.Offsets()) == 0 {
		t.Fatalf("%s's own committed offsets: %v %v", me.user, own, err)
	}
}

// tenantKcat: librdkafka over SASL_PLAINTEXT: its own topic round-trips, the other's refuses
// writes, and metadata shows only its own.
func tenantKcat(t *testing.T, env *Env, me, other *e2eTenant) {
	t.Helper()
	sasl := []string{"-b", env.Bootstrap, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN",
		"-X", "sasl.username=" + me.user, "-X", "sasl.password=" + me.password}
	kcat(t, "kcat-"+me.user+"\n", append(sasl, "-P", "-t", me.topic, "-p", "0")...)
	res := kcat(t, "", append(sasl, "-C", "-t", me.topic, "-p", "0", "-o", "-1", "-c", "1", "-e")...)
	if strings.TrimSpace(res.Stdout) != "kcat-"+me.user {
		t.Errorf("%s consumed %q", me.user, res.Stdout)
	}
	bad := runCmd(t, Cmd{Name: "kcat", Args: append(sasl, "-P", "-t", other.topic), Stdin: "intruder\n", Timeout: 60 * time.Second})
	if bad.ExitCode == 0 || !strings.Contains(bad.Stderr, "Topic authorization failed") {
		t.Errorf("%s produced to %s with kcat: exit %d\n%s", me.user, other.topic, bad.ExitCode, indent(bad.Stderr))
	}
	md := kcat(t, "", append(sasl, "-L")...)
	if !strings.Contains(md.Stdout, `topic "`+me.topic+`"`) || strings.Contains(md.Stdout, other.topic) {
		t.Errorf("%s's kcat -L:\n%s", me.user, indent(md.Stdout))
	}
}

// tenantJavaACLs: kafka-acls --list shows each user its own grants; --add says where
// permissions live.
func tenantJavaACLs(t *testing.T, env *Env, me, other *e2eTenant) {
	t.Helper()
	props := filepath.Join(t.TempDir(), "client.properties")
	err := os.WriteFile(props, []byte(strings.Join([]string{
		"security.protocol=SASL_PLAINTEXT",
		"sasl.mechanism=PLAIN",
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="` + me.user + `" password="` + me.password + `";`,
	}, "\n")+"\n"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	res := kafkaTool(t, "", "kafka-acls.sh", "--bootstrap-server", env.Bootstrap, "--command-config", props, "--list")
	for _, want := range []string{
		"ResourcePattern(resourceType=TOPIC, name=" + me.topic + ", patternType=LITERAL)",
		"(principal=User:" + me.user + ", host=*, operation=WRITE, permissionType=ALLOW)",
		"(principal=User:" + me.user + ", host=*, operation=READ, permissionType=ALLOW)",
		"(principal=User:" + me.user + ", host=*, operation=DELETE, permissionType=ALLOW)",
		"ResourcePattern(resourceType=GROUP, name=" + me.user + "., patternType=PREFIXED)",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("%s's kafka-acls --list lacks %q:\n%s", me.user, want, indent(res.Stdout))
		}
	}
	for _, unwanted := range []string{other.topic, "User:" + other.user, "ResourcePattern(resourceType=TOPIC, name=*,", "ResourcePattern(resourceType=GROUP, name=*,"} {
		if strings.Contains(res.Stdout, unwanted) {
			t.Errorf("%s's kafka-acls --list shows %q:\n%s", me.user, unwanted, indent(res.Stdout))
		}
	}
	add := runCmd(t, javaCmd("", "kafka-acls.sh", "--bootstrap-server", env.Bootstrap, "--command-config", props,
		"--add", "--allow-principal", "User:"+other.user, "--operation", "Read", "--topic", me.topic))
	if out := add.Stdout + add.Stderr; !strings.Contains(out, "permissions live in Iggy") {
		t.Errorf("kafka-acls --add: exit %d, no pointer to Iggy:\n%s", add.ExitCode, indent(out))
	}
}

// tenantRevocation: a permission revoked in Iggy stops the next request after the refresh
// interval, on a connection that was already authorized.
func tenantRevocation(t *testing.T, env, base *Env, ten *e2eTenant) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := ten.kgo(t, env)
	if err := produceOne(ctx, cl, ten.topic, "before"); err != nil {
		t.Fatalf("before revocation: %v", err)
	}
	ic, err := base.iggy.iggyClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ic.UpdatePermissions(ctx, iggy.Name(ten.user), nil); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	time.Sleep(tenantRefresh) // the bound under test: after it, the old grant must be gone
	if err := produceOne(ctx, cl, ten.topic, "after"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce %v after revocation: %v, want 29", time.Since(revoked).Round(time.Millisecond), err)
	}
}
