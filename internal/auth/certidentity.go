package auth

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
	"github.com/iggygw/iggy-gateway-kafka/internal/listener"
	"github.com/iggygw/iggy-gateway-kafka/internal/sslprincipal"
)

// MechanismSSL is the Identity.Mechanism of a client-certificate identity.
const MechanismSSL = "SSL"

// UserLookup finds Iggy users; the bridge's client implements it.
type UserLookup interface {
	GetUser(ctx context.Context, user iggy.Identifier) (*iggy.User, error)
}

// CertIdentities turns verified client certificates into identities: the subject is mapped to
// a user name by the principal mapping rules, and that user must exist in Iggy.
type CertIdentities struct {
	Mapper *sslprincipal.Mapper
	Users  UserLookup
	// Anonymous is the user a connection without a certificate (client auth "requested") acts
	// as (TLS_ANONYMOUS_PRINCIPAL); "" leaves it without an identity, acting as the bridge
	// account unchecked.
	Anonymous string
	Logger    *slog.Logger
}

// Identify is a listener.Config.ClientIdentity function. A connection without a certificate
// (client auth "requested") acts as Anonymous; a certificate that maps to no existing Iggy
// user closes the connection, with a log line naming the subject and the mapped name.
func (ci *CertIdentities) Identify(ctx context.Context, cc *listener.ConnContext, state tls.ConnectionState) error {
	if len(state.PeerCertificates) == 0 {
		// As a Kafka broker gives such a client the ANONYMOUS principal: it is authorized like
		// any identity, against the permissions of an Iggy user of that name, which need not
		// exist (then it may do nothing that needs a permission). docs/SECURITY.md.
		if ci.Anonymous != "" {
			cc.SetIdentity(listener.Identity{User: ci.Anonymous, Mechanism: MechanismSSL, Anonymous: true})
			ci.Logger.Debug("client without certificate", "remote", cc.RemoteAddr.String(), "user", ci.Anonymous)
		}
		return nil
	}
	// The rules see the full subject in RFC 2253 form, as Kafka's SslPrincipalMapper does
	// (docs/SECURITY.md, "Client certificates"): Go's parsed Subject drops attributes and
	// reorders the rest, which let certificates with different subjects map to one user.
	subject, err := sslprincipal.RFC2253(state.PeerCertificates[0].RawSubject)
	if err != nil {
		ci.Logger.Warn("client certificate refused: undecodable subject", "remote", cc.RemoteAddr.String(), "err", err)
		return err
	}
	name, err := ci.Mapper.Map(subject)
	if err != nil {
		ci.Logger.Warn("client certificate refused: no principal mapping rule matches", "remote", cc.RemoteAddr.String(), "subject", subject, "rules", ci.Mapper.String())
		return err
	}
	u, err := ci.Users.GetUser(ctx, iggy.Name(name))
	switch {
	case iggy.IsCode(err, iggy.CodeResourceNotFound, iggy.CodeInvalidUsername):
		ci.Logger.Warn("client certificate refused: mapped user does not exist in Iggy", "remote", cc.RemoteAddr.String(), "subject", subject, "mapped_user", name)
		return fmt.Errorf("no Iggy user %q", name)
	case err != nil:
		ci.Logger.Warn("client certificate refused: Iggy user could not be checked", "remote", cc.RemoteAddr.String(), "subject", subject, "mapped_user", name, "err", err)
		return err
	case u.Status != wire.UserActive:
		ci.Logger.Warn("client certificate refused: mapped Iggy user is inactive", "remote", cc.RemoteAddr.String(), "subject", subject, "mapped_user", name)
		return errors.New("inactive Iggy user")
	}
	cc.SetIdentity(listener.Identity{User: u.Username, UserID: u.ID, UserCreatedAt: u.CreatedAt, Mechanism: MechanismSSL})
	ci.Logger.Info("client certificate accepted", "remote", cc.RemoteAddr.String(), "subject", subject, "user", u.Username)
	return nil
}
