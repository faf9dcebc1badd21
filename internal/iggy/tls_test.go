package iggy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

// selfSigned returns a server certificate for 127.0.0.1 / "iggy.test" and its PEM.
func selfSigned(t *testing.T) (tls.Certificate, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "iggy.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"iggy.test"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestTLS(t *testing.T) {
	cert, caPEM := selfSigned(t)
	s := startScripted(t, func(_ int, h wire.RequestHeader, _ []byte) []byte {
		if h.Operation == wire.OpRegister {
			return nil
		}
		return reply(h, 0, nil)
	})
	// Put TLS in front of the scripted server.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", s.ln.Addr().String())
			if err != nil {
				in.Close()
				continue
			}
			go pipe(in, out)
			go pipe(out, in)
		}
	}()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := s.config()
	cfg.Addr = ln.Addr().String()
	cfg.TLSEnabled, cfg.TLSCAFile, cfg.TLSDomain = true, caFile, "iggy.test"
	cn, err := DialConn(testCtx(t), cfg)
	if err != nil {
		t.Fatalf("DialConn over TLS: %v", err)
	}
	if err := cn.Ping(testCtx(t)); err != nil {
		t.Fatalf("Ping over TLS: %v", err)
	}
	cn.Close()

	cfg.TLSCAFile = ""
	if _, err := DialConn(testCtx(t), cfg); !errors.Is(err, ErrConnection) {
		t.Fatalf("untrusted certificate: %v, want ErrConnection", err)
	}
	cfg.TLSCAFile = filepath.Join(t.TempDir(), "missing.pem")
	if _, err := DialConn(testCtx(t), cfg); err == nil {
		t.Fatal("missing CA file accepted")
	}
}

func pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
