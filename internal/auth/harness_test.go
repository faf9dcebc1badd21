package auth_test

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggygw/iggy-gateway-kafka/internal/auth"
	"github.com/iggygw/iggy-gateway-kafka/internal/broker"
	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/dataplane"
	"github.com/iggygw/iggy-gateway-kafka/internal/groups"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggylog"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
	"github.com/iggygw/iggy-gateway-kafka/internal/testutil"
	"github.com/iggygw/iggy-gateway-kafka/internal/tlsconfig/tlstest"
	"github.com/iggygw/iggy-gateway-kafka/internal/txn"
)

// Test users, created in the in-memory Iggy server of every secure gateway.
var testUsers = map[string]string{"alice": "alice-secret", "bob": "bob-secret"}

// caPlaceholder in a startSecure setting stands for the test CA's certificate file.
const caPlaceholder = "{CA}"

// secureGateway is a broker behind one listener per security protocol asked for, bridged to an
// in-memory Iggy server, with certificates made for the test.
type secureGateway struct {
	t     *testing.T
	addrs map[string]string // listener name -> address
	iggy  *iggy.Client      // root account
	ms    *memserver.Server
	ca    *tlstest.CA
	log   *testutil.SyncBuffer
	sec   *auth.Security
}

func startSecure(t *testing.T, protocols []string, env ...string) *secureGateway {
	t.Helper()
	return startSecureIggy(t, false, protocols, env...)
}

// startSecureIggy is startSecure with, when iggyTLS is set, an Iggy server that serves TLS
// only and a gateway bridged to it over TLS (IGGY_TLS_ENABLED, _DOMAIN, _CA_FILE).
func startSecureIggy(t *testing.T, iggyTLS bool, protocols []string, env ...string) *secureGateway {
	t.Helper()
	g := &secureGateway{t: t, addrs: map[string]string{}, ca: tlstest.NewCA(t, "test"), log: &testutil.SyncBuffer{}}
	server := g.ca.Server(t, "server")
	msCfg := memserver.Config{Addr: "127.0.0.1:0"}
	if iggyTLS {
		msCfg.TLS = &tls.Config{Certificates: []tls.Certificate{server.TLS}, MinVersion: tls.VersionTLS12}
	}
	ms, err := memserver.Start(msCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	g.ms = ms
	g.createUsers(iggyTLS)
	lns := map[string]net.Listener{}
	var specs []string
	for _, p := range protocols {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[p] = ln
		g.addrs[p] = ln.Addr().String()
		specs = append(specs, p+"://"+ln.Addr().String())
	}
	base := []string{
		"IGGY_KAFKA_LISTENERS=" + strings.Join(specs, ","),
		"IGGY_KAFKA_BRIDGE_ENABLED=true", "IGGY_KAFKA_IGGY_ADDR=" + ms.Addr(), "IGGY_KAFKA_IGGY_PASSWORD=iggy",
		"IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED=true",
	}
	for _, p := range protocols {
		if p == "SSL" || p == "SASL_SSL" {
			base = append(base, "IGGY_KAFKA_TLS_CERT_FILE="+server.CertFile, "IGGY_KAFKA_TLS_KEY_FILE="+server.KeyFile)
			break
		}
	}
	for _, e := range env {
		base = append(base, strings.ReplaceAll(e, caPlaceholder, g.ca.CertFile))
	}
	if iggyTLS {
		base = append(base, "IGGY_KAFKA_IGGY_TLS_ENABLED=true", "IGGY_KAFKA_IGGY_TLS_DOMAIN=localhost", "IGGY_KAFKA_IGGY_TLS_CA_FILE="+g.ca.CertFile)
	}
	cfg, err := config.Load(nil, base)
	if err != nil {
		t.Fatal(err)
	}
	// The bridge, as the gateway dials it: from the configuration.
	br := cfg.Bridge
	cl, err := iggy.Dial(ctxT(t), iggy.Config{Addr: br.Addr, Username: br.Username, Password: br.Password.Reveal(),
		TLSEnabled: br.TLSEnabled, TLSDomain: br.TLSDomain, TLSCAFile: br.TLSCAFile, PoolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	g.iggy = cl
	logger := slog.New(slog.NewTextHandler(io.MultiWriter(g.log, verboseOut()), nil))
	g.sec, err = auth.NewSecurity(cfg, cl, logger)
	if err != nil {
		t.Fatal(err)
	}
	groupsCfg := groups.DefaultConfig()
	groupsCfg.InitialRebalanceDelay = 0
	store := loadOffsets(t, cl, logger)
	b, err := broker.New(broker.Options{Config: cfg, Iggy: cl, Logger: logger, ClusterID: broker.ClusterID("test"),
		Authenticator: g.sec.Authenticator(), Offsets: store, Groups: &groupsCfg})
	if err != nil {
		t.Fatal(err)
	}
	// Transactions as the gateway wires them (internal/gateway, transactions.go), with the
	// transaction log in memory: the transactional-id rules are exercised end to end.
	coord := txn.New(txn.Config{NewProducerID: b.NextProducerID, Finisher: txnFinisher{b.Data(), store}, Logger: logger})
	b.SetTransactions(coord)
	coord.Start(context.Background())
	t.Cleanup(coord.Close)
	lim := cfg.Limits
	for _, l := range cfg.Listeners {
		lc := listener.Config{
			Name: l.Name, Dispatcher: b, Logger: logger,
			MaxFrameSize: lim.MaxFrameSize, MaxConnections: lim.MaxConnections, MaxInFlight: lim.MaxInFlight,
			IdleTimeout: lim.IdleTimeout, ReadTimeout: lim.ReadTimeout, WriteTimeout: lim.WriteTimeout,
		}
		if err := g.sec.Apply(l, &lc); err != nil {
			t.Fatal(err)
		}
		srv := listener.New(lc)
		done := make(chan error, 1)
		ln := lns[l.Name]
		go func() { done <- srv.Serve(ln) }()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			b.BeginShutdown()
			srv.Shutdown(ctx)
			<-done
		})
	}
	return g
}

// txnFinisher completes the harness's transactions: markers through the data plane, offsets
// into the store.
type txnFinisher struct {
	*dataplane.Plane
	store *offsets.Store
}

func (f txnFinisher) CommitOffsets(ctx context.Context, group string, cs []offsets.Commit) error {
	for _, err := range f.store.Commit(ctx, group, cs) {
		if err != nil {
			return err
		}
	}
	return nil
}

// loadOffsets opens the committed-offset store over Iggy, as the gateway does at startup, so
// that the group rules (which follow a group's committed offsets) are exercised.
func loadOffsets(t *testing.T, cl *iggy.Client, logger *slog.Logger) *offsets.Store {
	t.Helper()
	cfg := offsets.DefaultConfig(iggylog.NewTopic(cl, iggylog.ReservedStream, offsets.DefaultTopic, offsets.DefaultPartitions))
	cfg.Logger = logger
	s, err := offsets.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Load(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // before the Iggy client closes (registered after it)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return s
}

// createUsers creates the default stream and the test users, who may manage it, with the
// root account.
func (g *secureGateway) createUsers(iggyTLS bool) {
	t := g.t
	ctx := ctxT(t)
	cfg := iggy.Config{Addr: g.ms.Addr(), Username: "iggy", Password: "iggy"}
	if iggyTLS {
		cfg.TLS = g.clientTLS(nil)
	}
	cl, err := iggy.DialConn(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	st, err := cl.CreateStream(ctx, "kafka")
	if err != nil {
		t.Fatal(err)
	}
	// The test users own the default stream: requests are authorized against these grants.
	own := &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: st.ID, ManageStream: true}}}
	for u, p := range testUsers {
		if _, err := cl.CreateUser(ctx, u, p, wire.UserActive, own); err != nil {
			t.Fatal(err)
		}
	}
}

func verboseOut() io.Writer {
	if testing.Verbose() {
		return os.Stderr
	}
	return io.Discard
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// clientTLS trusts the test CA and presents cert when it is not nil.
func (g *secureGateway) clientTLS(cert *tlstest.Pair) *tls.Config {
	c := &tls.Config{RootCAs: g.ca.Pool(), ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if cert != nil {
		c.Certificates = []tls.Certificate{cert.TLS}
	}
	return c
}

// clientCert issues a client certificate with common name cn.
func (g *secureGateway) clientCert(cn string) *tlstest.Pair {
	return g.ca.Client(g.t, cn, pkix.Name{CommonName: cn, OrganizationalUnit: []string{"Tenants"}, Organization: []string{"Example"}})
}

// kafka returns a franz-go client for the listener, with extra options.
func (g *secureGateway) kafka(listenerName string, opts ...kgo.Opt) *kgo.Client {
	g.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(g.addrs[listenerName]), kgo.MetadataMinAge(10 * time.Millisecond),
		kgo.AllowAutoTopicCreation(), kgo.RetryTimeout(5 * time.Second),
	}, opts...)...)
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(cl.Close)
	return cl
}

func plainAuth(user, password string) kgo.Opt {
	return kgo.SASL(plain.Auth{User: user, Pass: password}.AsMechanism())
}

func bearerAuth(token string) kgo.Opt {
	return kgo.SASL(oauth.Auth{Token: token}.AsMechanism())
}

// roundTrip produces one record to topic and consumes it back.
func roundTrip(t *testing.T, cl *kgo.Client, topic string) error {
	t.Helper()
	ctx := ctxT(t)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("hello")}).FirstErr(); err != nil {
		return err
	}
	cl.AddConsumeTopics(topic)
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return errs[0].Err
		}
		if recs := fs.Records(); len(recs) > 0 {
			if string(recs[0].Value) != "hello" {
				t.Errorf("consumed %q", recs[0].Value)
			}
			return nil
		}
	}
}
