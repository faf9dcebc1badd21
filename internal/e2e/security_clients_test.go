package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/tlsconfig/tlstest"
)

// More client families over SASL and TLS listeners (docs/SECURITY.md, "Client
// configurations"): each runs the configuration the docs show and checks the data that comes
// back.

// clientCertEnv starts a gateway whose SSL listener requires client certificates from ca and
// maps their common name to the Iggy user, and returns it with a certificate for a new user
// and that user's name.
func clientCertEnv(t *testing.T) (*Env, *tlstest.CA, *tlstest.Pair, string) {
	t.Helper()
	ca := tlstest.NewCA(t, "e2e")
	base := sharedEnv(t)
	if base.External() {
		t.Skip("needs a gateway started by the harness")
	}
	user, _ := iggyUser(t, base, nil)
	client := ca.Client(t, "client", pkix.Name{CommonName: user, Organization: []string{"Example"}})
	env := secureEnv(t, ca, client, append(serverFiles(t, ca),
		"IGGY_KAFKA_TLS_CLIENT_AUTH=required", "IGGY_KAFKA_TLS_CLIENT_CA_FILE="+ca.CertFile,
		"IGGY_KAFKA_TLS_PRINCIPAL_MAPPING_RULES=RULE:^CN=([^,]*),.*$/$1/,DEFAULT")...)
	return env, ca, client, user
}

// ownGroup names a consumer group of user: with the default GROUP_ACL_DEFAULT=user-prefix an
// identified user may use the groups whose names start with its user name and a dot
// (docs/SECURITY.md, "Consumer groups"), and no other.
func ownGroup(user, name string) string { return user + "." + name }

func clientTLS(ca *tlstest.CA) *tls.Config {
	return &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// clientProperties writes a Java client.properties file of lines.
func clientProperties(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// javaRoundTrip creates a topic with kafka-topics (AdminClient), produces and consumes one
// record with the console tools (the consumer in group), and lists the topic, all with props;
// toolEnv is added to the tools' environment.
func javaRoundTrip(t *testing.T, env *Env, props, group string, toolEnv ...string) {
	t.Helper()
	tool := func(stdin, name string, args ...string) CmdResult {
		t.Helper()
		cmd := javaCmd(stdin, name, append([]string{"--bootstrap-server", env.Bootstrap, "--command-config", props}, args...)...)
		cmd.Env = append(cmd.Env, toolEnv...)
		return mustRun(t, cmd)
	}
	topic := TopicName(t)
	tool("", "kafka-topics.sh", "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")
	tool("java-secret\n", "kafka-console-producer.sh", "--topic", topic)
	res := tool("", "kafka-console-consumer.sh", "--topic", topic, "--group", group, "--from-beginning", "--max-messages", "1", "--timeout-ms", "30000")
	if strings.TrimSpace(res.Stdout) != "java-secret" {
		t.Errorf("consumed %q", res.Stdout)
	}
	res = tool("", "kafka-topics.sh", "--describe", "--topic", topic)
	if !strings.Contains(res.Stdout, "PartitionCount: 1") {
		t.Errorf("kafka-topics --describe does not show %s:\n%s", topic, res.Stdout)
	}
}

// Java with a client certificate in a PKCS12 key store and the CA in a PKCS12 trust store,
// both made at test time (openssl and the JDK's keytool), through the CLI tools and the
// AdminClient; then the PEM key store variant the docs also show.
func TestSecurityJavaClientCertificate(t *testing.T) {
	securityScenario(t, javaFamily, CellTLS)
	for _, tool := range []string{"openssl", "keytool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not in PATH: it makes the Java key stores", tool)
		}
	}
	env, ca, client, user := clientCertEnv(t)
	dir := t.TempDir()
	keystore, truststore := filepath.Join(dir, "client.p12"), filepath.Join(dir, "truststore.p12")
	const pass = "store-secret"
	mustRun(t, Cmd{Name: "openssl", Args: []string{"pkcs12", "-export", "-in", client.CertFile, "-inkey", client.KeyFile,
		"-name", "client", "-out", keystore, "-passout", "pass:" + pass}, Timeout: 30 * time.Second})
	mustRun(t, Cmd{Name: "keytool", Args: []string{"-importcert", "-noprompt", "-alias", "ca", "-file", ca.CertFile,
		"-keystore", truststore, "-storetype", "PKCS12", "-storepass", pass}, Timeout: 30 * time.Second})
	javaRoundTrip(t, env, clientProperties(t,
		"security.protocol=SSL",
		"ssl.keystore.type=PKCS12", "ssl.keystore.location="+keystore, "ssl.keystore.password="+pass, "ssl.key.password="+pass,
		"ssl.truststore.type=PKCS12", "ssl.truststore.location="+truststore, "ssl.truststore.password="+pass,
	), ownGroup(user, "java"))

	// PEM stores: the key (PKCS#8, unencrypted) and the certificate in one file.
	pemStore := filepath.Join(dir, "client-cert-and-key.pem")
	if err := os.WriteFile(pemStore, append(append([]byte{}, client.KeyPEM...), client.CertPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	props := clientProperties(t, "security.protocol=SSL",
		"ssl.truststore.type=PEM", "ssl.truststore.location="+ca.CertFile,
		"ssl.keystore.type=PEM", "ssl.keystore.location="+pemStore)
	topic := env.CreateTopic(t, 1)
	res := kafkaTool(t, "", "kafka-topics.sh", "--bootstrap-server", env.Bootstrap, "--command-config", props, "--list")
	if !strings.Contains(res.Stdout, topic) {
		t.Errorf("kafka-topics --list with PEM stores does not show %s:\n%s", topic, res.Stdout)
	}
}

func TestSecurityConfluentKafkaClientCertificate(t *testing.T) {
	securityScenario(t, pythonFamily, CellTLS)
	env, ca, client, user := clientCertEnv(t)
	confluentRoundTrip(t, env, ownGroup(user, "confluent"), map[string]string{"security.protocol": "SSL", "ssl.ca.location": ca.CertFile,
		"ssl.certificate.location": client.CertFile, "ssl.key.location": client.KeyFile})
}

func TestSecurityConfluentKafkaSASLSSL(t *testing.T) {
	securityScenario(t, pythonFamily, CellSASL, CellTLS)
	ca := tlstest.NewCA(t, "e2e")
	env := secureEnv(t, ca, nil, append(serverFiles(t, ca), "IGGY_KAFKA_SASL_ENABLED=true")...)
	user, password := iggyUser(t, env, nil)
	confluentRoundTrip(t, env, ownGroup(user, "confluent"), map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanisms": "PLAIN",
		"sasl.username": user, "sasl.password": password, "ssl.ca.location": ca.CertFile})
}

// saramaSASL configures SASL PLAIN (over TLS when tlsCfg is not nil) as docs/SECURITY.md
// shows.
func saramaSASL(user, password string, tlsCfg *tls.Config) func(*sarama.Config) {
	return func(cfg *sarama.Config) {
		if tlsCfg != nil {
			cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, tlsCfg
		}
		cfg.Net.SASL.Enable = true
		cfg.Net.SASL.Mechanism = sarama.SASLTypePlaintext
		cfg.Net.SASL.User, cfg.Net.SASL.Password = user, password
		cfg.Net.SASL.Handshake = true
	}
}

// saramaRoundTrip produces one record with a sarama SyncProducer and reads it back with a
// partition consumer, both with the security settings of configure.
func saramaRoundTrip(t *testing.T, env *Env, configure func(*sarama.Config)) {
	t.Helper()
	topic := env.CreateTopic(t, 1)
	cfg := saramaConfig()
	configure(cfg)
	cfg.Producer.Return.Successes = true
	cl := saramaClient(t, env, cfg)
	producer, err := sarama.NewSyncProducerFromClient(cl)
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("sarama-secret")}); err != nil {
		t.Fatalf("produce: %v", err)
	}
	consumer, err := sarama.NewConsumerFromClient(cl)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("consume: %v", err)
	}
	defer pc.Close()
	select {
	case m := <-pc.Messages():
		if string(m.Value) != "sarama-secret" || m.Offset != 0 {
			t.Errorf("consumed %q at offset %d", m.Value, m.Offset)
		}
	case err := <-pc.Errors():
		t.Fatalf("consume: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no record consumed within 30 s")
	}
}

// saramaRefused checks that a sarama client configured by configure cannot connect, and
// returns its error.
func saramaRefused(t *testing.T, env *Env, configure func(*sarama.Config)) error {
	t.Helper()
	cfg := saramaConfig()
	configure(cfg)
	cfg.Metadata.Retry.Max = 0
	c, err := sarama.NewClient([]string{env.Bootstrap}, cfg)
	if err == nil {
		c.Close()
		t.Fatal("the client connected")
	}
	return err
}

// saramaWrongPassword checks that a wrong password is refused with the authentication error.
func saramaWrongPassword(t *testing.T, env *Env, user string, tlsCfg *tls.Config) {
	t.Helper()
	if err := saramaRefused(t, env, saramaSASL(user, "wrong", tlsCfg)); !errors.Is(err, sarama.ErrSASLAuthenticationFailed) {
		t.Errorf("wrong password: err = %v, want SASL authentication failed", err)
	}
}

func TestSecuritySaramaSASLPlaintext(t *testing.T) {
	securityScenario(t, saramaFamily, CellSASL)
	env := secureEnv(t, nil, nil, "IGGY_KAFKA_SASL_ENABLED=true")
	user, password := iggyUser(t, env, nil)
	saramaRoundTrip(t, env, saramaSASL(user, password, nil))
	saramaWrongPassword(t, env, user, nil)
}

func TestSecuritySaramaSASLSSL(t *testing.T) {
	securityScenario(t, saramaFamily, CellSASL, CellTLS)
	ca := tlstest.NewCA(t, "e2e")
	env := secureEnv(t, ca, nil, append(serverFiles(t, ca), "IGGY_KAFKA_SASL_ENABLED=true")...)
	user, password := iggyUser(t, env, nil)
	saramaRoundTrip(t, env, saramaSASL(user, password, clientTLS(ca)))
	saramaWrongPassword(t, env, user, clientTLS(ca))
}

// sarama over SSL with a client certificate mapped to an Iggy user (docs/SECURITY.md: a
// tls.Config with Certificates); without a certificate the listener refuses the handshake.
func TestSecuritySaramaClientCertificate(t *testing.T) {
	securityScenario(t, saramaFamily, CellTLS)
	env, ca, client, _ := clientCertEnv(t)
	pair, err := tls.LoadX509KeyPair(client.CertFile, client.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	withCert := clientTLS(ca)
	withCert.Certificates = []tls.Certificate{pair}
	saramaRoundTrip(t, env, func(cfg *sarama.Config) { cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, withCert })
	if err := saramaRefused(t, env, func(cfg *sarama.Config) { cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, clientTLS(ca) }); errors.Is(err, sarama.ErrSASLAuthenticationFailed) {
		t.Errorf("without a client certificate: %v, want a TLS failure", err)
	}
}

// kafkajsRoundTrip produces the timed sample with kafkajs's idempotent producer and reads it
// back with a kafkajs consumer in group, both with the security options secArgs.
func kafkajsRoundTrip(t *testing.T, env *Env, group string, secArgs ...string) {
	t.Helper()
	topic := env.CreateTopic(t, 1)
	want := timedSampleRecords()
	var produced struct {
		BaseOffsets []int64 `json:"base_offsets"`
	}
	kafkajsScript.run(t, env, want, &produced, append([]string{"produce", "--topic", topic, "--codec", "none"}, secArgs...)...)
	var out struct {
		Records []Rec `json:"records"`
	}
	kafkajsScript.run(t, env, nil, &out, append([]string{"group-consume", "--topic", topic, "--group", group,
		"--count", strconv.Itoa(len(want))}, secArgs...)...)
	checkRecords(t, out.Records, want, 0, timeWindow{})
}

func TestSecurityKafkajsSASLPlaintext(t *testing.T) {
	securityScenario(t, kafkajsFamily, CellSASL)
	env := secureEnv(t, nil, nil, "IGGY_KAFKA_SASL_ENABLED=true")
	user, password := iggyUser(t, env, nil)
	kafkajsRoundTrip(t, env, ownGroup(user, "kafkajs"), "--sasl-username", user, "--sasl-password", password)
}

func TestSecurityKafkajsSASLSSL(t *testing.T) {
	securityScenario(t, kafkajsFamily, CellSASL, CellTLS)
	ca := tlstest.NewCA(t, "e2e")
	env := secureEnv(t, ca, nil, append(serverFiles(t, ca), "IGGY_KAFKA_SASL_ENABLED=true")...)
	user, password := iggyUser(t, env, nil)
	kafkajsRoundTrip(t, env, ownGroup(user, "kafkajs"), "--ca", ca.CertFile, "--sasl-username", user, "--sasl-password", password)
}

// kafkajs over SSL with a client certificate mapped to an Iggy user (docs/SECURITY.md: ssl
// with cert and key, no sasl).
func TestSecurityKafkajsClientCertificate(t *testing.T) {
	securityScenario(t, kafkajsFamily, CellTLS)
	env, ca, client, user := clientCertEnv(t)
	kafkajsRoundTrip(t, env, ownGroup(user, "kafkajs"), "--ca", ca.CertFile, "--cert", client.CertFile, "--key", client.KeyFile)
}

// iggyUserToken creates an Iggy user (iggyUser) and a personal access token of it called name
// that expires after life, and returns the user, a connection logged in as the user (closed
// at the end of the test) and the token.
func iggyUserToken(t *testing.T, env *Env, name string, life time.Duration) (string, *iggy.Conn, string) {
	t.Helper()
	user, password := iggyUser(t, env, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	owner, err := iggy.DialConn(ctx, iggy.Config{Addr: env.iggy.target.addr, Username: user, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { owner.Close() })
	token, err := owner.CreatePAT(ctx, name, uint64(life.Microseconds()))
	if err != nil {
		t.Fatal(err)
	}
	return user, owner, token
}

// The Java CLI tools and AdminClient with OAUTHBEARER and an Iggy personal access token,
// through the login callback handler docs/SECURITY.md ships (docs/examples), compiled here
// against the suite's kafka-clients jar; a deleted token is refused.
func TestSecurityJavaOAuthBearer(t *testing.T) {
	securityScenario(t, javaFamily, CellSASL)
	if _, err := exec.LookPath("javac"); err != nil {
		t.Fatal("javac not in PATH: it compiles the login callback handler (a JDK, as Maven needs)")
	}
	jars, _ := filepath.Glob(filepath.Join(rootPath(javaLibDir), "kafka-clients-*.jar"))
	if len(jars) != 1 {
		t.Fatalf("kafka-clients jars in %s: %v", javaLibDir, jars)
	}
	classes := t.TempDir()
	mustRun(t, Cmd{Name: "javac", Args: []string{"-cp", jars[0], "-d", classes, rootPath("docs/examples/IggyTokenLoginCallbackHandler.java")},
		Timeout: 90 * time.Second})
	env := secureEnv(t, nil, nil, "IGGY_KAFKA_SASL_ENABLED=true")
	user, owner, token := iggyUserToken(t, env, "java", time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	props := func(token string) string {
		return clientProperties(t, "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=OAUTHBEARER",
			"sasl.login.callback.handler.class=IggyTokenLoginCallbackHandler",
			`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required token="`+token+`" lifetimeSeconds="3600";`)
	}
	classpath := "CLASSPATH=" + classes
	javaRoundTrip(t, env, props(token), ownGroup(user, "java"), classpath)
	if !strings.Contains(env.gateway.Output.String(), "mechanism=OAUTHBEARER user="+user) {
		t.Error("the gateway log does not name the token's user")
	}
	if err := owner.DeletePAT(ctx, "java"); err != nil {
		t.Fatal(err)
	}
	cmd := javaCmd("", "kafka-topics.sh", "--bootstrap-server", env.Bootstrap, "--command-config", props(token), "--list")
	cmd.Env = append(cmd.Env, classpath)
	if res := runCmd(t, cmd); res.ExitCode == 0 || !strings.Contains(res.Stdout+res.Stderr, "Authentication failed") {
		t.Errorf("kafka-topics with a deleted token: exit %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, indent(res.Stdout), indent(res.Stderr))
	}
}

// franz-go with OAUTHBEARER and an Iggy personal access token that expires long before
// SASL_SESSION_LIFETIME: the token works while valid, the session is capped by its expiry, and
// once it has expired the client's re-authentication is refused on the same connection.
func TestSecurityFranzOAuthBearer(t *testing.T) {
	securityScenario(t, franzFamily, CellSASL)
	const tokenLife = 4 * time.Second
	env := secureEnv(t, nil, nil, "IGGY_KAFKA_SASL_ENABLED=true", "IGGY_KAFKA_SASL_SESSION_LIFETIME=1h")
	user, _, token := iggyUserToken(t, env, "kafka", tokenLife)
	expires := time.Now().Add(tokenLife)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	topic := env.CreateTopic(t, 1)
	bearer := kgo.SASL(oauth.Auth{Token: token}.AsMechanism())
	producer := env.Kgo(t, bearer)
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("bearer-secret")}).FirstErr(); err != nil {
		t.Fatalf("produce with a valid token: %v", err)
	}
	consumer := env.Kgo(t, bearer, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := consumer.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatalf("consume with a valid token: %v", err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "bearer-secret" {
		t.Errorf("consumed %v", recs)
	}
	consumer.Close() // its connections would re-authenticate too, each throttled after the first failure
	if !strings.Contains(env.gateway.Output.String(), "mechanism=OAUTHBEARER user="+user) {
		t.Error("the gateway log does not name the token's user")
	}
	time.Sleep(time.Until(expires) + 200*time.Millisecond)
	err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("after expiry")}).FirstErr()
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("produce after the token expired: err = %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

// A burst of wrong passwords from one address, sent by concurrent franz-go clients, is
// throttled by the gateway binary: every attempt is refused with SASL_AUTHENTICATION_FAILED,
// the attempts run one at a time, and each waits twice as long as the previous one (500 ms,
// 1 s, 2 s after the first failure), so the burst takes at least 3.5 s.
func TestSecurityPasswordBurstThrottled(t *testing.T) {
	securityScenario(t, franzFamily, CellSASL)
	const attempts = 4
	env := secureEnv(t, nil, nil, "IGGY_KAFKA_SASL_ENABLED=true")
	user, _ := iggyUser(t, env, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type answer struct {
		at  time.Time
		err error
	}
	answers := make(chan answer, attempts)
	start := time.Now()
	for range attempts {
		cl := env.Kgo(t, kgo.SASL(plain.Auth{User: user, Pass: "guess"}.AsMechanism()))
		go func() {
			err := cl.Ping(ctx)
			answers <- answer{time.Now(), err}
		}()
	}
	var last time.Time
	for range attempts {
		a := <-answers
		if !errors.Is(a.err, kerr.SaslAuthenticationFailed) {
			t.Errorf("wrong password: err = %v, want SASL_AUTHENTICATION_FAILED", a.err)
		}
		last = a.at
	}
	burst := last.Sub(start)
	t.Logf("%d wrong passwords answered within %v", attempts, burst)
	if burst < 3500*time.Millisecond {
		t.Errorf("%d wrong passwords answered within %v: want at least 3.5 s (0.5 + 1 + 2 s of throttling)", attempts, burst)
	}
}
