package auth

import (
	"context"
	"log/slog"
	"os"
	"sync"

	"github.com/iggygw/iggy-gateway-kafka/internal/config"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/supervise"
	"github.com/iggygw/iggy-gateway-kafka/internal/tlsconfig"
)

// Security is the TLS and authentication setup of the gateway's listeners, built from the
// configuration.
type Security struct {
	cfg   *config.Config
	log   *slog.Logger
	tls   *tlsconfig.Source // nil without TLS listeners
	authn *Authenticator    // nil without SASL listeners
	certs *CertIdentities   // nil without client certificates
	// sessions re-verifies the users of open connections; nil without identified listeners.
	sessions *SessionChecker
}

// NewSecurity loads the TLS material and prepares SASL and client-certificate checks. users is
// the bridge's client (nil without the bridge; the configuration requires it for SASL and
// client certificates).
func NewSecurity(cfg *config.Config, users UserLookup, log *slog.Logger) (*Security, error) {
	s := &Security{cfg: cfg, log: log}
	for _, l := range cfg.Listeners {
		if l.TLS() && s.tls == nil {
			src, err := tlsconfig.New(tlsconfig.Options{
				CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSKeyFile, ClientCAFile: cfg.TLSClientCAFile, Logger: log,
			})
			if err != nil {
				return nil, err
			}
			s.tls = src
		}
		if l.SASL() && s.authn == nil {
			s.authn = NewAuthenticator(Options{
				Verifier: IggyVerifier{Base: iggy.Config{
					Addr: cfg.Bridge.Addr, TLSEnabled: cfg.Bridge.TLSEnabled,
					TLSDomain: cfg.Bridge.TLSDomain, TLSCAFile: cfg.Bridge.TLSCAFile,
				}},
				MaxConcurrent:   cfg.Limits.MaxConcurrentAuthentications,
				SessionLifetime: cfg.SASLSessionLifetime,
				Timeout:         cfg.Limits.ReadTimeout,
				Logger:          log,
			})
		}
		if (l.SASL() || cfg.ClientCertificates(l)) && s.sessions == nil && users != nil {
			s.sessions = NewSessionChecker(users, cfg.AuthzRefreshInterval)
		}
		if cfg.ClientCertificates(l) && s.certs == nil {
			s.certs = &CertIdentities{Mapper: cfg.PrincipalMapper, Users: users, Logger: log}
			if cfg.TLSAnonymousPrincipal != config.BridgePrincipal {
				s.certs.Anonymous = cfg.TLSAnonymousPrincipal
			}
		}
	}
	return s, nil
}

// Authenticator verifies SASL credentials; nil without SASL listeners.
func (s *Security) Authenticator() *Authenticator { return s.authn }

// Apply sets the TLS and SASL fields of l's listener configuration.
func (s *Security) Apply(l config.Listener, lc *listener.Config) error {
	if l.TLS() {
		clientAuth := tlsconfig.ClientAuthNone
		if s.cfg.ClientCertificates(l) {
			clientAuth = tlsconfig.ClientAuth(s.cfg.TLSClientAuth)
			lc.ClientIdentity = s.certs.Identify
		}
		var err error
		if lc.TLS, err = s.tls.ServerConfig(clientAuth); err != nil {
			return err
		}
	}
	if s.sessions != nil && (l.SASL() || s.cfg.ClientCertificates(l)) {
		lc.SessionCheck, lc.SessionCheckInterval = s.sessions.Check, s.cfg.AuthzRefreshInterval
	}
	if l.SASL() {
		lc.SASL = true
		lc.PreAuthMaxFrameSize = s.cfg.Limits.PreAuthMaxFrameSize
	}
	return nil
}

// Reload reads the TLS certificate, key and client CA again (SIGHUP); a broken set is logged
// and the one in use stays.
func (s *Security) Reload() error {
	if s.tls == nil {
		return nil
	}
	return s.tls.Reload()
}

// Run reloads the TLS files when they change and whenever hup delivers (SIGHUP), until ctx
// ends; it returns once the file watcher has stopped too. A panic of the watcher or of a
// reload is recovered (internal/supervise): the TLS material in use stays.
func (s *Security) Run(ctx context.Context, hup <-chan os.Signal) {
	if s.tls == nil {
		return
	}
	var watching sync.WaitGroup
	defer watching.Wait()
	supervise.Go(&watching, s.log, "tls_watcher", func() { s.tls.Watch(ctx, s.cfg.TLSReloadInterval) }, nil)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			s.reloadSafe()
		}
	}
}

func (s *Security) reloadSafe() {
	defer supervise.Recover(s.log, "tls_watcher", nil)
	_ = s.Reload() // logged by the source
}
