package groups

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The KIP-848 group types: groups of JoinGroup/SyncGroup, and of ConsumerGroupHeartbeat
// (whose protocol type, as Kafka lists it, is "consumer").
const (
	groupType         = "classic"
	consumerGroupType = "consumer"
)

// DescribeGroups handles a DescribeGroups request. A group without members that has stored
// state is Empty; an unknown group is Dead (with GROUP_ID_NOT_FOUND from v6, as in Kafka).
// Protocol metadata and assignments are reported only for a Stable group, as Kafka does.
// AuthorizedOperations is left at its "not provided" default for the handler to fill.
func (c *Coordinator) DescribeGroups(req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, name := range req.Groups {
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group = name
		if err := c.checkGroupID(name, true); err != nil {
			dg.ErrorCode = err.Code
		} else {
			c.describe(&dg, req.Version)
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

func (c *Coordinator) describe(dg *kmsg.DescribeGroupsResponseGroup, version int16) {
	if c.isConsumerGroup(dg.Group) {
		// Not a classic group: Kafka answers Dead (GROUP_ID_NOT_FOUND from v6); admin clients
		// describe it with ConsumerGroupDescribe.
		dg.State = stateDead.String()
		if version >= 6 {
			dg.ErrorCode = kerr.GroupIDNotFound.Code
			dg.ErrorMessage = kmsg.StringPtr("group " + dg.Group + " is not a classic group")
		}
		return
	}
	if g, _ := c.lockGroup(dg.Group, false); g != nil {
		g.describe(dg)
		g.mu.Unlock()
		return
	}
	if c.cfg.Stored != nil {
		if protocolType, _, ok := c.cfg.Stored.LookupGroup(dg.Group); ok {
			dg.State = stateEmpty.String()
			dg.ProtocolType = protocolType
			return
		}
	}
	dg.State = stateDead.String()
	if version >= 6 {
		dg.ErrorCode = kerr.GroupIDNotFound.Code
		dg.ErrorMessage = kmsg.StringPtr("group " + dg.Group + " not found")
	}
}

func (g *group) describe(dg *kmsg.DescribeGroupsResponseGroup) {
	dg.State = g.state.String()
	dg.ProtocolType = g.protocolType
	stable := g.state == stateStable
	if stable {
		dg.Protocol = g.protocol
	}
	for _, m := range g.sortedMembers() {
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID = m.id
		dm.InstanceID = m.instanceID
		dm.ClientID = m.client.ID
		dm.ClientHost = m.client.Host
		if stable {
			dm.ProtocolMetadata = m.metadataFor(g.protocol)
			dm.MemberAssignment = m.assignment
		}
		dg.Members = append(dg.Members, dm)
	}
}

// ListGroups handles a ListGroups request: groups with members and groups that only have
// stored state (as Empty), sorted by name, filtered by state (v4+) and type (v5+: "classic",
// or "consumer" for the groups of the consumer protocol); both filters are case-insensitive.
func (c *Coordinator) ListGroups(req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	wants := func(t string) bool {
		return len(req.TypesFilter) == 0 || slices.ContainsFunc(req.TypesFilter, func(f string) bool { return strings.EqualFold(f, t) })
	}
	wantClassic, wantConsumer := wants(groupType), wants(consumerGroupType)
	listed := make(map[string]bool)
	add := func(name, protocolType, state, typ string) {
		listed[name] = true
		if len(req.StatesFilter) > 0 && !slices.ContainsFunc(req.StatesFilter, func(f string) bool { return strings.EqualFold(f, state) }) {
			return
		}
		if typ == groupType && !wantClassic || typ == consumerGroupType && !wantConsumer {
			return
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group = name
		lg.ProtocolType = protocolType
		lg.GroupState = state
		lg.GroupType = typ
		resp.Groups = append(resp.Groups, lg)
	}
	// Consumer groups first: their committed offsets must not list them again as classic.
	for _, cg := range c.consumerGroups() {
		add(cg.name, consumerGroupType, cg.state, consumerGroupType)
	}
	c.mu.Lock()
	gs := make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		gs = append(gs, g)
	}
	c.mu.Unlock()
	for _, g := range gs {
		g.mu.Lock()
		if g.state != stateDead && !listed[g.name] {
			add(g.name, g.protocolType, g.state.String(), groupType)
		}
		g.mu.Unlock()
	}
	if c.cfg.Stored != nil {
		c.cfg.Stored.RangeGroups(func(name, protocolType string) {
			if !listed[name] {
				add(name, protocolType, stateEmpty.String(), groupType)
			}
		})
	}
	slices.SortFunc(resp.Groups, func(a, b kmsg.ListGroupsResponseGroup) int { return strings.Compare(a.Group, b.Group) })
	return resp
}
