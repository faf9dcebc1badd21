// Package tlstest generates short-lived certificates for tests: a CA, server certificates for
// 127.0.0.1 and client certificates with a chosen subject. Nothing is committed: every test
// run makes its own.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a test certificate authority.
type CA struct {
	Cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	CertPEM []byte
	// CertFile is CertPEM written to a temporary file.
	CertFile string
	dir      string
}

// Pair is an issued certificate with its key, in memory and as PEM files.
type Pair struct {
	TLS               tls.Certificate
	CertPEM, KeyPEM   []byte
	CertFile, KeyFile string
}

var serial atomic.Int64

// NewCA returns a CA whose files live in t.TempDir().
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{Cert: cert, key: key, CertPEM: pemBlock("CERTIFICATE", der), dir: t.TempDir()}
	ca.CertFile = ca.write(t, name+"-ca.pem", ca.CertPEM)
	return ca
}

// Pool is a pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Server issues a server certificate for 127.0.0.1, ::1 and localhost.
func (ca *CA) Server(t testing.TB, name string) *Pair {
	return ca.issue(t, name, pkix.Name{CommonName: "localhost"}, nil, x509.ExtKeyUsageServerAuth)
}

// Client issues a client certificate with the given subject.
func (ca *CA) Client(t testing.TB, name string, subject pkix.Name) *Pair {
	return ca.issue(t, name, subject, nil, x509.ExtKeyUsageClientAuth)
}

// ClientRawSubject issues a client certificate whose subject is the DER-encoded name raw, for
// names pkix.Name cannot express (multi-valued RDNs, repeated or unknown attributes, any order).
func (ca *CA) ClientRawSubject(t testing.TB, name string, raw []byte) *Pair {
	return ca.issue(t, name, pkix.Name{}, raw, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issue(t testing.TB, name string, subject pkix.Name, rawSubject []byte, usage x509.ExtKeyUsage) *Pair {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: subject, RawSubject: rawSubject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := &Pair{CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("PRIVATE KEY", keyDER)}
	if p.TLS, err = tls.X509KeyPair(p.CertPEM, p.KeyPEM); err != nil {
		t.Fatal(err)
	}
	p.CertFile = ca.write(t, name+".pem", p.CertPEM)
	p.KeyFile = ca.write(t, name+"-key.pem", p.KeyPEM)
	return p
}

func (ca *CA) write(t testing.TB, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(ca.dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
