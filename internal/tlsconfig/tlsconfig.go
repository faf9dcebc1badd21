// Package tlsconfig builds the server-side TLS configuration of the Kafka listeners and keeps it
// current: the certificate, key and client CA are read from PEM files and read again when the
// files change (Watch) or on request (Reload, wired to SIGHUP). Handshakes always use the
// material loaded last; connections already open keep the session they negotiated. A broken new
// pair is logged and the previous one stays in use (docs/SECURITY.md).
package tlsconfig

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ClientAuth is how a listener asks for client certificates.
type ClientAuth string

// Client certificate modes, as Kafka's ssl.client.auth.
const (
	ClientAuthNone      ClientAuth = "none"
	ClientAuthRequested ClientAuth = "requested"
	ClientAuthRequired  ClientAuth = "required"
)

// Options name the PEM files.
type Options struct {
	CertFile, KeyFile string
	// ClientCAFile verifies client certificates; required for listeners that ask for them.
	ClientCAFile string
	Logger       *slog.Logger
}

// Source is the current TLS material. It is safe for concurrent use.
type Source struct {
	opts Options
	log  *slog.Logger

	reloadMu sync.Mutex // one reload at a time
	cur      atomic.Pointer[material]
}

// material is one consistent load of the files.
type material struct {
	cert     *tls.Certificate
	clientCA *x509.CertPool
	digest   [sha256.Size]byte // of the files' contents, to see whether they changed
}

// New loads the files once; a broken pair fails here, at startup.
func New(opts Options) (*Source, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Source{opts: opts, log: opts.Logger}
	m, err := s.load()
	if err != nil {
		return nil, err
	}
	s.cur.Store(m)
	return s, nil
}

// ServerConfig returns the configuration for a listener asking for client certificates as
// auth says: TLS 1.2 or newer with forward-secret AEAD cipher suites only (TLS 1.3 suites are
// all of that kind), and the material current at each handshake.
func (s *Source) ServerConfig(auth ClientAuth) (*tls.Config, error) {
	if auth != ClientAuthNone && s.opts.ClientCAFile == "" {
		return nil, errors.New("tlsconfig: client certificates need a client CA file")
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		CipherSuites: modernSuites,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			m := s.cur.Load()
			return &tls.Config{
				MinVersion:   tls.VersionTLS12,
				CipherSuites: modernSuites,
				Certificates: []tls.Certificate{*m.cert},
				ClientAuth:   clientAuthType(auth),
				ClientCAs:    m.clientCA,
			}, nil
		},
	}, nil
}

// modernSuites are the TLS 1.2 suites with ECDHE key exchange and an AEAD cipher.
var modernSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

func clientAuthType(auth ClientAuth) tls.ClientAuthType {
	switch auth {
	case ClientAuthRequested:
		return tls.VerifyClientCertIfGiven
	case ClientAuthRequired:
		return tls.RequireAndVerifyClientCert
	default:
		return tls.NoClientCert
	}
}

// Reload reads the files again. When they hold a valid pair that differs from the one in use,
// it becomes current for new handshakes; when they are broken, the error is logged and
// returned, and the material in use stays.
func (s *Source) Reload() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	m, err := s.load()
	if err != nil {
		s.log.Error("TLS reload failed; keeping the certificate in use", "cert_file", s.opts.CertFile, "err", err)
		return err
	}
	if m.digest == s.cur.Load().digest {
		return nil
	}
	s.cur.Store(m)
	s.log.Info("TLS certificate reloaded", "cert_file", s.opts.CertFile, "not_after", m.cert.Leaf.NotAfter)
	return nil
}

// Watch polls the files every interval and reloads when their contents change, until ctx ends.
// Polling needs no platform file-notification support and also sees files replaced by
// renaming (as Kubernetes secret volumes do).
func (s *Source) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d, err := s.digest()
		if err != nil || d == s.cur.Load().digest {
			continue // a file being rewritten; the next tick sees the result
		}
		_ = s.Reload() // logged; the old material stays
	}
}

// files are the paths read, in a fixed order.
func (s *Source) files() []string {
	fs := []string{s.opts.CertFile, s.opts.KeyFile}
	if s.opts.ClientCAFile != "" {
		fs = append(fs, s.opts.ClientCAFile)
	}
	return fs
}

func (s *Source) readAll() ([][]byte, [sha256.Size]byte, error) {
	h := sha256.New()
	var out [][]byte
	for _, f := range s.files() {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, [sha256.Size]byte{}, err
		}
		h.Write(b)
		h.Write([]byte{0})
		out = append(out, b)
	}
	var d [sha256.Size]byte
	copy(d[:], h.Sum(nil))
	return out, d, nil
}

func (s *Source) digest() ([sha256.Size]byte, error) {
	_, d, err := s.readAll()
	return d, err
}

func (s *Source) load() (*material, error) {
	contents, d, err := s.readAll()
	if err != nil {
		return nil, fmt.Errorf("tlsconfig: %w", err)
	}
	cert, err := tls.X509KeyPair(contents[0], contents[1])
	if err != nil {
		return nil, fmt.Errorf("tlsconfig: certificate %s and key %s: %w", s.opts.CertFile, s.opts.KeyFile, err)
	}
	m := &material{cert: &cert, digest: d}
	if len(contents) > 2 {
		m.clientCA = x509.NewCertPool()
		if !m.clientCA.AppendCertsFromPEM(bytes.TrimSpace(contents[2])) {
			return nil, fmt.Errorf("tlsconfig: client CA file %s holds no PEM certificate", s.opts.ClientCAFile)
		}
	}
	return m, nil
}
