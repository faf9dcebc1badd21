package listener

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ConnContext describes one client connection to the handlers. It is safe for concurrent use.
type ConnContext struct {
	ID         uint64   // unique per process, for logs
	Listener   string   // listener name, e.g. "PLAINTEXT"
	RemoteAddr net.Addr // client address
	LocalAddr  net.Addr // address the client connected to

	clientID atomic.Pointer[string]

	mu              sync.Mutex
	softwareName    string
	softwareVersion string
	identity        Identity
	saslMechanism   string
}

// Identity is who a connection acts as: an Iggy user, established by SASL or by a mapped client
// certificate. Authorization decisions start from it (docs/SECURITY.md).
type Identity struct {
	User string // Iggy user name; "" when the connection has no identity
	// Mechanism says how User was established: a SASL mechanism ("PLAIN", "OAUTHBEARER") or
	// "SSL" for a client certificate.
	Mechanism string
	// Expires is when a SASL session ends unless the client re-authenticates (KIP-368); zero
	// when it does not expire.
	Expires time.Time
	// UserID and UserCreatedAt identify the Iggy user User named when it was authenticated:
	// Iggy reuses the ids of deleted users, so a user deleted and created again under the same
	// name differs in one of them (Config.SessionCheck).
	UserID        uint32
	UserCreatedAt uint64
	// Anonymous: User was given, not proven (a client without a certificate acting as
	// TLS_ANONYMOUS_PRINCIPAL); no Iggy user need exist under that name.
	Anonymous bool
}

// Authenticated reports whether the identity names a user.
func (id Identity) Authenticated() bool { return id.User != "" }

// ClientID is the client id of the latest request header ("" when null).
func (c *ConnContext) ClientID() string {
	if p := c.clientID.Load(); p != nil {
		return *p
	}
	return ""
}

func (c *ConnContext) setClientID(id *string) {
	if id == nil {
		c.clientID.Store(nil)
		return
	}
	if old := c.clientID.Load(); old == nil || *old != *id {
		c.clientID.Store(id)
	}
}

// SetClientSoftware records the client software name and version (ApiVersions v3+).
func (c *ConnContext) SetClientSoftware(name, version string) {
	c.mu.Lock()
	c.softwareName, c.softwareVersion = name, version
	c.mu.Unlock()
}

// ClientSoftware returns what SetClientSoftware recorded.
func (c *ConnContext) ClientSoftware() (name, version string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.softwareName, c.softwareVersion
}

// SetIdentity records who the connection acts as from now on.
func (c *ConnContext) SetIdentity(id Identity) {
	c.mu.Lock()
	c.identity = id
	c.mu.Unlock()
}

// Identity is who the connection acts as; its zero value when nobody authenticated.
func (c *ConnContext) Identity() Identity {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.identity
}

// SetSASLMechanism records the mechanism a SaslHandshake chose for the next SaslAuthenticate.
func (c *ConnContext) SetSASLMechanism(m string) {
	c.mu.Lock()
	c.saslMechanism = m
	c.mu.Unlock()
}

// SASLMechanism is the mechanism of the last SaslHandshake, "" before one.
func (c *ConnContext) SASLMechanism() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.saslMechanism
}
