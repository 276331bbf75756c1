package broker

import (
	"slices"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleDescribeGroups describes groups as Kafka's GroupMetadata.summary
// does: the state, the protocol type, and the members with their client
// ids; the protocol and each member's metadata and assignment bytes only
// while the group is Stable. A group of consumers in the process
// (strata.Consumer) is Stable, of protocol type consumer and of the
// protocol its recorded metadata names (the store's assignor, as
// Store.ListGroups gives it), its members of client id strata, each with
// its subscription and the partitions it owns in Kafka's consumer
// protocol encoding, as kafka-consumer-groups shows them. A group with
// committed offsets only is Empty; a group with neither is Dead, without
// an error (Kafka's answer before v6, the versions served). Authorized
// operations, when asked for (v3 on), are all of a group's
// (authorized_ops.go).
func handleDescribeGroups(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	known := srv.store.Groups()
	var protocols map[string]string // of the in-process groups, once one is asked for
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
			if protocols == nil {
				protocols = inProcessProtocols(srv.store)
			}
			describeInProcess(srv.store.GroupMembers(name), protocols[name], &sg)
		default:
			sg.State = groupDead.String()
		}
		if req.IncludeAuthorizedOperations {
			sg.AuthorizedOperations = groupOps
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

// inProcessClientID is the client id DescribeGroups gives the members of
// a group of consumers in the process, as the store records them.
const inProcessClientID = "strata"

// inProcessProtocols returns the protocol (the assignor's name) of each
// group the store records, as ListGroups gives it.
func inProcessProtocols(s *strata.Store) map[string]string {
	out := map[string]string{}
	listed, _ := s.ListGroups() // a closed store's groups are not described anyway
	for _, l := range listed {
		out[l.Group] = l.Protocol
	}
	return out
}

// describeInProcess describes a group with the store's consumers
// members, of protocol protocol, Empty without them.
func describeInProcess(members []strata.GroupMember, protocol string, sg *kmsg.DescribeGroupsResponseGroup) {
	if len(members) == 0 {
		sg.State = groupEmpty.String()
		return
	}
	sg.State, sg.ProtocolType, sg.Protocol = groupStable.String(), consumerProtocolType, protocol
	for _, m := range members {
		sm := kmsg.NewDescribeGroupsResponseGroupMember()
		sm.MemberID, sm.ClientID = m.ID, inProcessClientID
		md := kmsg.NewConsumerMemberMetadata()
		md.Topics = m.Topics
		sm.ProtocolMetadata = md.AppendTo(nil)
		a := kmsg.NewConsumerMemberAssignment()
		for topic, parts := range byTopic(m.Owned) {
			t := kmsg.NewConsumerMemberAssignmentTopic()
			t.Topic, t.Partitions = topic, parts
			a.Topics = append(a.Topics, t)
		}
		sm.MemberAssignment = a.AppendTo(nil)
		sg.Members = append(sg.Members, sm)
	}
}
