package auth

import (
	"bytes"
	"errors"
	"strings"
)

// SASL mechanisms served.
const (
	MechanismPlain       = "PLAIN"
	MechanismOAuthBearer = "OAUTHBEARER"
)

// Mechanisms lists the SASL mechanisms in the order SaslHandshake reports them.
var Mechanisms = []string{MechanismPlain, MechanismOAuthBearer}

// errMalformed is a client message that does not follow its mechanism's syntax.
var errMalformed = errors.New("malformed SASL message")

// Credentials are what a client presented: a user name and password (PLAIN) or a bearer token
// (OAUTHBEARER, an Iggy personal access token).
type Credentials struct {
	Mechanism string
	User      string
	Password  string
	Token     string
}

// parsePlain reads a PLAIN message (RFC 4616): [authzid] NUL authcid NUL passwd. An
// authorization id other than the authentication id would mean acting as someone else, which
// Iggy has no notion of: it is refused.
func parsePlain(msg []byte) (Credentials, error) {
	parts := bytes.Split(msg, []byte{0})
	if len(parts) != 3 || len(parts[1]) == 0 || len(parts[2]) == 0 {
		return Credentials{}, errMalformed
	}
	authz, user := string(parts[0]), string(parts[1])
	if authz != "" && authz != user {
		return Credentials{}, errMalformed
	}
	return Credentials{Mechanism: MechanismPlain, User: user, Password: string(parts[2])}, nil
}

// parseOAuthBearer reads an OAUTHBEARER client initial response (RFC 7628 §3.1):
// gs2-header \x01 *(key=value \x01) \x01, where the auth key holds "Bearer <token>".
func parseOAuthBearer(msg []byte) (Credentials, error) {
	s := string(msg)
	header, rest, ok := strings.Cut(s, "\x01")
	if !ok || !strings.HasPrefix(header, "n,") && !strings.HasPrefix(header, "y,") {
		return Credentials{}, errMalformed // "p," (channel binding) is not offered
	}
	kvs, ok := strings.CutSuffix(rest, "\x01\x01")
	if !ok {
		return Credentials{}, errMalformed
	}
	var token string
	for _, kv := range strings.Split(kvs, "\x01") {
		k, v, _ := strings.Cut(kv, "=")
		if k != "auth" {
			continue
		}
		scheme, tok, ok := strings.Cut(v, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || token != "" {
			return Credentials{}, errMalformed
		}
		token = strings.TrimSpace(tok)
	}
	if token == "" {
		return Credentials{}, errMalformed
	}
	return Credentials{Mechanism: MechanismOAuthBearer, Token: token}, nil
}

// Parse reads the client's SaslAuthenticate bytes for mechanism.
func Parse(mechanism string, msg []byte) (Credentials, error) {
	switch mechanism {
	case MechanismPlain:
		return parsePlain(msg)
	case MechanismOAuthBearer:
		return parseOAuthBearer(msg)
	default:
		return Credentials{}, errMalformed
	}
}
