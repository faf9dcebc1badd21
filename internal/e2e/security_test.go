package e2e

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
	"github.com/iggygw/iggy-gateway-kafka/internal/tlsconfig/tlstest"
)

// Security scenarios: real clients over SASL and TLS listeners (docs/SECURITY.md). Each starts
// its own gateway on the shared Iggy backend, with certificates made for the run.

// securityScenario records t as a scenario of fam covering cells in the report (these
// scenarios start gateways of their own, so they are tests rather than runScenarios entries),
// and skips it unless fam is installed (fails under IGGYGW_E2E_REQUIRED=1).
func securityScenario(t *testing.T, fam Family, covers ...Cell) {
	t.Helper()
	if testing.Short() && !required() {
		t.Skip("end-to-end scenarios do not run in -short mode")
	}
	version, missing := fam.Detect()
	res := Result{Family: fam.Name, Version: version, Scenario: strings.TrimPrefix(t.Name(), "Test"), Covers: covers}
	start := time.Now()
	t.Cleanup(func() { recordOutcome(t, res, start) }) // res as it is then, with any Reason
	if missing != "" {
		res.Reason = "client not installed: " + missing
		if required() {
			t.Fatalf("%s: %s", fam.Name, missing)
		}
		t.Skipf("%s: %s (run scripts/install-test-deps.sh)", fam.Name, missing)
	}
}

// iggyUser creates an Iggy user with a fresh name and password on the shared backend, with
// perms, or (nil) the right to manage the stream the gateway maps Kafka topics to.
func iggyUser(t *testing.T, env *Env, perms *wire.Permissions) (name, password string) {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name, password = "kafka-"+hex.EncodeToString(b[:]), "pw-"+hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := env.iggy.iggyClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if perms == nil {
		if _, err := iggy.EnsureStream(ctx, cl, kafkaStream); err != nil {
			t.Fatal(err)
		}
		st, err := cl.GetStream(ctx, iggy.Name(kafkaStream))
		if err != nil {
			t.Fatal(err)
		}
		perms = &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: st.ID, ManageStream: true}}}
	}
	if _, err := cl.CreateUser(ctx, name, password, wire.UserActive, perms); err != nil {
		t.Fatalf("create Iggy user %s: %v", name, err)
	}
	env.iggy.leaveNothing(t, "user "+name, func(ctx context.Context, c *iggy.Client) error {
		return c.DeleteUser(ctx, iggy.Name(name))
	})
	return name, password
}

// secureEnv starts a gateway with extra settings; with a CA, the readiness probe uses TLS and
// presents probeCert when it is not nil.
func secureEnv(t *testing.T, ca *tlstest.CA, probeCert *tlstest.Pair, extraEnv ...string) *Env {
	t.Helper()
	var probe *tls.Config
	if ca != nil {
		probe = &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
		if probeCert != nil {
			probe.Certificates = []tls.Certificate{probeCert.TLS}
		}
	}
	return startOwnGatewayTLS(t, probe, extraEnv...)
}

func serverFiles(t *testing.T, ca *tlstest.CA) []string {
	p := ca.Server(t, "gateway")
	return []string{"IGGY_KAFKA_TLS_CERT_FILE=" + p.CertFile, "IGGY_KAFKA_TLS_KEY_FILE=" + p.KeyFile}
}

func TestSecurityKcatSASLPlaintext(t *testing.T) {
	securityScenario(t, kcatFamily, CellSASL)
	env := secureEnv(t, nil, nil, "IGGY_KAFKA_SASL_ENABLED=true")
	user, password := iggyUser(t, env, nil)
	topic := env.CreateTopic(t, 1)
	sasl := []string{"-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN", "-X", "sasl.username=" + user}
	kcat(t, "secret-hello\n", append(append([]string{"-b", env.Bootstrap}, sasl...), "-X", "sasl.password="+password, "-P", "-t", topic)...)
	res := kcat(t, "", append(append([]string{"-b", env.Bootstrap}, sasl...), "-X", "sasl.password="+password, "-C", "-t", topic, "-o", "beginning", "-c", "1", "-e")...)
	if strings.TrimSpace(res.Stdout) != "secret-hello" {
		t.Errorf("consumed %q", res.Stdout)
	}
	// A wrong password fails with the authentication error, not a hang or a crash.
	bad := runCmd(t, Cmd{Name: "kcat", Args: append(append([]string{"-b", env.Bootstrap}, sasl...), "-X", "sasl.password=wrong", "-L", "-m", "10"), Timeout: 60 * time.Second})
	if bad.ExitCode == 0 || !strings.Contains(bad.Stderr+bad.Stdout, "Authentication failed") {
		t.Errorf("wrong password: exit %d\nstdout:\n%s\nstderr:\n%s", bad.ExitCode, indent(bad.Stdout), indent(bad.Stderr))
	}
	// Without SASL the client gets nothing.
	plain := runCmd(t, Cmd{Name: "kcat", Args: []string{"-b", env.Bootstrap, "-L", "-m", "5"}, Timeout: 60 * time.Second})
	if plain.ExitCode == 0 {
		t.Errorf("kcat without SASL listed metadata:\n%s", indent(plain.Stdout))
	}
}

func TestSecurityKcatClientCertificate(t *testing.T) {
	securityScenario(t, kcatFamily, CellTLS)
	env, ca, client, _ := clientCertEnv(t)
	topic := env.CreateTopic(t, 1)
	ssl := []string{"-b", env.Bootstrap, "-X", "security.protocol=SSL", "-X", "ssl.ca.location=" + ca.CertFile,
		"-X", "ssl.certificate.location=" + client.CertFile, "-X", "ssl.key.location=" + client.KeyFile}
	kcat(t, "mtls-hello\n", append(ssl, "-P", "-t", topic)...)
	res := kcat(t, "", append(ssl, "-C", "-t", topic, "-o", "beginning", "-c", "1", "-e")...)
	if strings.TrimSpace(res.Stdout) != "mtls-hello" {
		t.Errorf("consumed %q", res.Stdout)
	}
	// A certificate for a user Iggy does not know is refused.
	stranger := ca.Client(t, "stranger", pkix.Name{CommonName: "nobody-here", Organization: []string{"Example"}})
	bad := runCmd(t, Cmd{Name: "kcat", Args: []string{"-b", env.Bootstrap, "-X", "security.protocol=SSL", "-X", "ssl.ca.location=" + ca.CertFile,
		"-X", "ssl.certificate.location=" + stranger.CertFile, "-X", "ssl.key.location=" + stranger.KeyFile, "-L", "-m", "5"}, Timeout: 60 * time.Second})
	if bad.ExitCode == 0 {
		t.Errorf("unknown user's certificate listed metadata:\n%s", indent(bad.Stdout))
	}
	if !strings.Contains(env.gateway.Output.String(), "mapped_user=nobody-here") {
		t.Error("the gateway log does not name the refused mapped user")
	}
}

// Java CLI tools over SASL_SSL with a client.properties file, as the docs show.
func TestSecurityJavaSASLSSL(t *testing.T) {
	securityScenario(t, javaFamily, CellSASL, CellTLS)
	ca := tlstest.NewCA(t, "e2e")
	env := secureEnv(t, ca, nil, append(serverFiles(t, ca), "IGGY_KAFKA_SASL_ENABLED=true")...)
	user, password := iggyUser(t, env, nil)
	props := filepath.Join(t.TempDir(), "client.properties")
	err := os.WriteFile(props, []byte(strings.Join([]string{
		"security.protocol=SASL_SSL",
		"sasl.mechanism=PLAIN",
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="` + user + `" password="` + password + `";`,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + ca.CertFile,
	}, "\n")+"\n"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	topic := TopicName(t)
	kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", env.Bootstrap, "--command-config", props,
		"--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")
	kafkaTool(t, "java-secret\n", "kafka-console-producer.sh", "--bootstrap-server", env.Bootstrap, "--command-config", props, "--topic", topic)
	res := kafkaTool(t, "", "kafka-console-consumer.sh", "--bootstrap-server", env.Bootstrap, "--command-config", props,
		"--topic", topic, "--group", ownGroup(user, "console"), "--from-beginning", "--max-messages", "1", "--timeout-ms", "30000")
	if strings.TrimSpace(res.Stdout) != "java-secret" {
		t.Errorf("consumed %q", res.Stdout)
	}
	res = kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", env.Bootstrap, "--command-config", props, "--list")
	if !strings.Contains(res.Stdout, topic) {
		t.Errorf("kafka-topics --list over SASL_SSL does not show %s:\n%s", topic, res.Stdout)
	}
}

// confluentScript produces one record with confluent-kafka (librdkafka) and reads it back
// through a group consumer; argv: topic, group, then the client configuration as JSON (the
// keys of docs/SECURITY.md).
const confluentScript = `
import json, sys
from confluent_kafka import Producer, Consumer
topic, group, conf = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
p = Producer(conf)
p.produce(topic, b"confluent-secret")
if p.flush(30) != 0:
    sys.exit("not delivered")
c = Consumer(dict(conf, **{"group.id": group, "auto.offset.reset": "earliest"}))
c.subscribe([topic])
for _ in range(60):
    m = c.poll(1.0)
    if m is None:
        continue
    if m.error():
        sys.exit(str(m.error()))
    print(m.value().decode())
    break
c.close()
`

// confluentRoundTrip runs confluentScript against env with conf (bootstrap.servers added),
// consuming in group.
func confluentRoundTrip(t *testing.T, env *Env, group string, conf map[string]string) {
	t.Helper()
	topic := env.CreateTopic(t, 1)
	conf["bootstrap.servers"] = env.Bootstrap
	js, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, Cmd{Name: pythonBin(), Args: []string{"-c", confluentScript, topic, group, string(js)}, Timeout: 90 * time.Second})
	if strings.TrimSpace(res.Stdout) != "confluent-secret" {
		t.Errorf("consumed %q\nstderr:\n%s", res.Stdout, indent(res.Stderr))
	}
}

func TestSecurityConfluentKafkaSASLPlaintext(t *testing.T) {
	securityScenario(t, pythonFamily, CellSASL)
	env := secureEnv(t, nil, nil, "IGGY_KAFKA_SASL_ENABLED=true")
	user, password := iggyUser(t, env, nil)
	confluentRoundTrip(t, env, ownGroup(user, "confluent"), map[string]string{"security.protocol": "SASL_PLAINTEXT",
		"sasl.mechanisms": "PLAIN", "sasl.username": user, "sasl.password": password})
}

// franz-go over SASL_SSL: a produced record comes back through a group consumer.
func TestSecurityFranzSASLSSL(t *testing.T) {
	securityScenario(t, franzFamily, CellSASL, CellTLS)
	ca := tlstest.NewCA(t, "e2e")
	env := secureEnv(t, ca, nil, append(serverFiles(t, ca), "IGGY_KAFKA_SASL_ENABLED=true")...)
	user, password := iggyUser(t, env, nil)
	topic := env.CreateTopic(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	secure := []kgo.Opt{
		kgo.DialTLSConfig(&tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}),
		kgo.SASL(plain.Auth{User: user, Pass: password}.AsMechanism()),
	}
	if err := env.Kgo(t, secure...).ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("franz-secret")}).FirstErr(); err != nil {
		t.Fatalf("produce over SASL_SSL: %v", err)
	}
	consumer := env.Kgo(t, append(secure, kgo.ConsumerGroup(ownGroup(user, "franz")), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	fs := consumer.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatalf("consume over SASL_SSL: %v", err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "franz-secret" {
		t.Errorf("consumed %v", recs)
	}
}
