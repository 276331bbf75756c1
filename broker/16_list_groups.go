package broker

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The group types of ListGroups v5 (KIP-848): a group of the classic
// protocol, or one with members of KIP-848's (ConsumerGroupHeartbeat).
const (
	groupTypeClassic  = "classic"
	groupTypeConsumer = "consumer"
)

// handleListGroups lists the groups: those of wire clients with their
// state and protocol type, those of consumers in the process as Stable
// consumer groups, and those with committed offsets only as Empty,
// filtered by state (v4+, case-insensitive, KIP-518) and type (v5+,
// KIP-848: "consumer" for a group with members of KIP-848's protocol,
// "classic" for every other).
func handleListGroups(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListGroupsRequest)
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	wanted := func(state groupState, typ string) bool {
		return (len(req.StatesFilter) == 0 || slices.ContainsFunc(req.StatesFilter, func(s string) bool { return strings.EqualFold(s, state.String()) })) &&
			(len(req.TypesFilter) == 0 || slices.ContainsFunc(req.TypesFilter, func(t string) bool { return strings.EqualFold(t, typ) }))
	}
	add := func(name, protocolType string, state groupState) {
		typ := groupTypeClassic
		if srv.consumers.has(name) {
			typ = groupTypeConsumer
		}
		if wanted(state, typ) {
			lg := kmsg.NewListGroupsResponseGroup()
			lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = name, protocolType, state.String(), typ
			resp.Groups = append(resp.Groups, lg)
		}
	}
	known := srv.store.Groups()
	gs := &srv.groups
	gs.mu.Lock()
	defer gs.mu.Unlock()
	for _, name := range known {
		switch {
		case gs.groupLocked(name) != nil:
		case len(srv.store.GroupMembers(name)) > 0:
			add(name, consumerProtocolType, groupStable)
		default:
			add(name, "", groupEmpty)
		}
	}
	for _, g := range gs.mu.m {
		add(g.name, g.protocolType, g.state)
	}
	slices.SortFunc(resp.Groups, func(a, b kmsg.ListGroupsResponseGroup) int { return strings.Compare(a.Group, b.Group) })
	return resp, nil
}
