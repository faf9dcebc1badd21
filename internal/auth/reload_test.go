package auth_test

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/auth"
	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/tlsconfig/tlstest"
)

// A SIGHUP delivered to Security.Run reloads the listener certificate (the file poll is set
// too slow to be the one that did it).
func TestReloadOnSIGHUP(t *testing.T) {
	ca := tlstest.NewCA(t, "hup")
	first, second := ca.Server(t, "first"), ca.Server(t, "second")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	write := func(p *tlstest.Pair) {
		if err := os.WriteFile(certFile, p.CertPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, p.KeyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(first)
	cfg, err := config.Load(nil, []string{"IGGY_KAFKA_BIND_ADDR=127.0.0.1:0", "IGGY_KAFKA_TLS_CERT_FILE=" + certFile,
		"IGGY_KAFKA_TLS_KEY_FILE=" + keyFile, "IGGY_KAFKA_TLS_RELOAD_INTERVAL=1h"})
	if err != nil {
		t.Fatal(err)
	}
	sec, err := auth.NewSecurity(cfg, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var lc listener.Config
	if err := sec.Apply(cfg.Listeners[0], &lc); err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", lc.TLS)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	servedLeaf := func() []byte {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].Raw
	}
	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() { defer close(done); sec.Run(ctx, hup) }()
	defer func() { cancel(); <-done }()

	write(second)
	hup <- syscall.SIGHUP
	deadline := time.Now().Add(10 * time.Second)
	for string(servedLeaf()) != string(second.TLS.Leaf.Raw) {
		if time.Now().After(deadline) {
			t.Fatal("SIGHUP did not reload the certificate")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Run returns only once the TLS file watcher has stopped (issue 25: it was started and not
// waited for). The watcher is held inside a file read (the certificate replaced by a named
// pipe no one writes) when Run is told to stop: Run waits until the read ends.
func TestRunWaitsForTheWatcher(t *testing.T) {
	pair := tlstest.NewCA(t, "watch").Server(t, "gw")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pair.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pair.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(nil, []string{"IGGY_KAFKA_BIND_ADDR=127.0.0.1:0", "IGGY_KAFKA_TLS_CERT_FILE=" + certFile,
		"IGGY_KAFKA_TLS_KEY_FILE=" + keyFile, "IGGY_KAFKA_TLS_RELOAD_INTERVAL=10ms"})
	if err != nil {
		t.Fatal(err)
	}
	sec, err := auth.NewSecurity(cfg, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(certFile); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(certFile, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); sec.Run(ctx, make(chan os.Signal)) }()
	time.Sleep(100 * time.Millisecond) // the watcher's first tick opens the pipe and blocks
	cancel()
	select {
	case <-done:
		t.Fatal("Run returned while its watcher was still running")
	case <-time.After(200 * time.Millisecond):
	}
	w, err := os.OpenFile(certFile, os.O_WRONLY, 0) // the watcher's reader is there
	if err != nil {
		t.Fatal(err)
	}
	// The certificate is a file again for the reload the changed digest triggers, and the
	// watcher's read ends.
	regular := filepath.Join(dir, "cert.new")
	if err := os.WriteFile(regular, pair.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(regular, certFile); err != nil {
		t.Fatal(err)
	}
	w.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return once its watcher could stop")
	}
}
