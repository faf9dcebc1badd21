package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Peer is one gateway of a multi-gateway deployment, as BROKERS lists it: its node id and
// the address Kafka clients reach it at.
type Peer struct {
	ID   int32
	Host string
	Port int
}

// Addr is the peer's host:port.
func (p Peer) Addr() string { return net.JoinHostPort(p.Host, strconv.Itoa(p.Port)) }

// parseBrokers parses BROKERS: comma-separated id@host:port entries.
func parseBrokers(spec string) ([]Peer, error) {
	var out []Peer
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		id, addr, ok := strings.Cut(part, "@")
		if !ok {
			return nil, fmt.Errorf("invalid %sBROKERS entry %q: expected id@host:port", EnvPrefix, part)
		}
		n, err := strconv.Atoi(id)
		if err != nil || n < 0 || n > MaxNodeID {
			return nil, fmt.Errorf("invalid %sBROKERS entry %q: the id must be a number from 0 to %d", EnvPrefix, part, MaxNodeID)
		}
		host, port, err := splitHostPort(addr)
		if err != nil || isWildcard(host) || port == 0 {
			return nil, fmt.Errorf("invalid %sBROKERS entry %q: expected id@host:port with the host and port clients connect to", EnvPrefix, part)
		}
		out = append(out, Peer{ID: int32(n), Host: host, Port: port})
	}
	return out, nil
}

// buildPeers checks BROKERS against this gateway: every id and address appears once, this
// gateway's NODE_ID is listed, and its entry is the address this gateway advertises (what
// the other gateways tell clients must reach this one).
func (c *Config) buildPeers(explicit map[string]bool) error {
	if c.Brokers == "" {
		return nil
	}
	peers, err := parseBrokers(c.Brokers)
	if err != nil {
		return err
	}
	ids, addrs := map[int32]bool{}, map[string]int32{}
	for _, p := range peers {
		if ids[p.ID] {
			return fmt.Errorf("invalid %sBROKERS: node id %d is listed twice", EnvPrefix, p.ID)
		}
		ids[p.ID] = true
		if other, dup := addrs[p.Addr()]; dup {
			return fmt.Errorf("invalid %sBROKERS: nodes %d and %d both have the address %s", EnvPrefix, other, p.ID, p.Addr())
		}
		addrs[p.Addr()] = p.ID
	}
	if !explicit["NODE_ID"] {
		return fmt.Errorf("%sBROKERS is set: set %sNODE_ID to this gateway's id in it", EnvPrefix, EnvPrefix)
	}
	self, ok := findPeer(peers, int32(c.NodeID))
	if !ok {
		return fmt.Errorf("%sNODE_ID=%d is not in %sBROKERS (%s)", EnvPrefix, c.NodeID, EnvPrefix, c.Brokers)
	}
	if len(c.Listeners) != 1 {
		return fmt.Errorf("%sBROKERS gives one address per gateway, so it needs exactly one Kafka listener (%d are configured)", EnvPrefix, len(c.Listeners))
	}
	l := c.Listeners[0]
	if l.AdvertisedHost != self.Host || l.AdvertisedPort != self.Port {
		adv := net.JoinHostPort(l.AdvertisedHost, strconv.Itoa(l.AdvertisedPort))
		return fmt.Errorf("%sBROKERS lists node %d at %s, but this gateway advertises %s: they must be the same (set the advertised host and port, or correct the entry)",
			EnvPrefix, c.NodeID, self.Addr(), adv)
	}
	c.Peers = peers
	return nil
}

func findPeer(peers []Peer, id int32) (Peer, bool) {
	for _, p := range peers {
		if p.ID == id {
			return p, true
		}
	}
	return Peer{}, false
}
