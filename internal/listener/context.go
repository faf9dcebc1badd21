package listener

import (
	"net"
	"sync"
	"sync/atomic"
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
	principal       string
}

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

// SetPrincipal records the authenticated principal of the connection.
func (c *ConnContext) SetPrincipal(p string) {
	c.mu.Lock()
	c.principal = p
	c.mu.Unlock()
}

// Principal is the authenticated principal, "" when the connection is not authenticated.
func (c *ConnContext) Principal() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.principal
}
