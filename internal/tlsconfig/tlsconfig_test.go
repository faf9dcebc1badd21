package tlsconfig

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/tlsconfig/tlstest"
)

// serve accepts TLS connections with cfg until the test ends.
func serve(t *testing.T, cfg *tls.Config) string {
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.(*tls.Conn).Handshake()
				c.Read(make([]byte, 1)) // hold until the client closes
			}()
		}
	}()
	return ln.Addr().String()
}

// served returns the leaf certificate a new connection gets, keeping the connection open.
func served(t *testing.T, addr string, roots *x509.CertPool) (*x509.Certificate, *tls.Conn) {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.ConnectionState().PeerCertificates[0], c
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReload(t *testing.T) {
	ca := tlstest.NewCA(t, "reload")
	first, second := ca.Server(t, "first"), ca.Server(t, "second")
	dir := t.TempDir()
	certFile, keyFile := dir+"/cert.pem", dir+"/key.pem"
	copyFile(t, first.CertFile, certFile)
	copyFile(t, first.KeyFile, keyFile)
	src, err := New(Options{CertFile: certFile, KeyFile: keyFile, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := src.ServerConfig(ClientAuthNone)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	leaf, open := served(t, addr, ca.Pool())
	if !leaf.Equal(first.TLS.Leaf) {
		t.Fatal("not the first certificate")
	}

	// A broken pair (new certificate, old key) is refused; the first pair stays.
	copyFile(t, second.CertFile, certFile)
	if err := src.Reload(); err == nil {
		t.Fatal("mismatched pair was accepted")
	}
	if leaf, _ := served(t, addr, ca.Pool()); !leaf.Equal(first.TLS.Leaf) {
		t.Fatal("a broken pair replaced the certificate in use")
	}

	// The complete new pair is picked up by Watch, without a restart.
	copyFile(t, second.KeyFile, keyFile)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); src.Watch(ctx, 10*time.Millisecond) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if leaf, _ := served(t, addr, ca.Pool()); leaf.Equal(second.TLS.Leaf) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new certificate was not picked up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The connection opened before the reload still works.
	if _, err := open.Write([]byte{0}); err != nil {
		t.Fatalf("open connection broken by the reload: %v", err)
	}
}

func TestModernTLSOnly(t *testing.T) {
	ca := tlstest.NewCA(t, "modern")
	p := ca.Server(t, "server")
	src, err := New(Options{CertFile: p.CertFile, KeyFile: p.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := src.ServerConfig(ClientAuthNone)
	addr := serve(t, cfg)
	for _, c := range []*tls.Config{
		{MaxVersion: tls.VersionTLS11},
		{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}},
	} {
		c.RootCAs, c.ServerName = ca.Pool(), "127.0.0.1"
		if conn, err := tls.Dial("tcp", addr, c); err == nil {
			conn.Close()
			t.Errorf("handshake with %+v succeeded", c)
		}
	}
	if _, err := src.ServerConfig(ClientAuthRequired); err == nil {
		t.Error("client auth without a CA file was accepted")
	}
	if _, err := New(Options{CertFile: p.CertFile, KeyFile: ca.CertFile}); err == nil {
		t.Error("a certificate with the wrong key was accepted at startup")
	}
}
