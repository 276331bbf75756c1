package broker

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleDescribeGroups describes groups as Kafka's GroupMetadata.summary
// does: the state, the protocol type, and the members with their client
// ids; the protocol and each member's metadata and assignment bytes only
// while the group is Stable. A group with committed offsets and no wire
// members (in-process consumers' groups, standalone commits) is Empty; a
// group with neither is Dead, without an error (Kafka's answer before
// v6, the versions served).
func handleDescribeGroups(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	known := srv.store.Groups()
	gs := &srv.groups
	gs.mu.Lock()
	defer gs.mu.Unlock()
	for _, name := range req.Groups {
		sg := kmsg.NewDescribeGroupsResponseGroup()
		sg.Group = name
		g := gs.groupLocked(name)
		switch {
		case name == "":
			sg.ErrorCode = errInvalidGroupID
		case g != nil:
			g.describeLocked(&sg)
		case slices.Contains(known, name):
			sg.State = groupEmpty.String()
		default:
			sg.State = groupDead.String()
		}
		resp.Groups = append(resp.Groups, sg)
	}
	return resp, nil
}

// describeLocked fills in g's description.
func (g *wireGroup) describeLocked(sg *kmsg.DescribeGroupsResponseGroup) {
	sg.State, sg.ProtocolType = g.state.String(), g.protocolType
	stable := g.state == groupStable
	if stable {
		sg.Protocol = g.protocol
	}
	for _, m := range g.sortedMembersLocked() {
		sm := kmsg.NewDescribeGroupsResponseGroupMember()
		sm.MemberID, sm.ClientID = m.id, m.clientID
		if m.instanceID != "" {
			sm.InstanceID = &m.instanceID
		}
		if stable {
			sm.ProtocolMetadata, sm.MemberAssignment = m.metadata(g.protocol), m.assignment
		}
		sg.Members = append(sg.Members, sm)
	}
}
