package broker

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// handleConsumerGroupDescribe describes consumer groups (KIP-848) as
// Kafka's ConsumerGroup does: the members of the store's group
// coordinator, the wire members of ConsumerGroupHeartbeat with their
// member ids, instance ids, client ids, epochs and subscriptions as the
// clients sent them, and the store's own Consumers of the group with
// their store member ids (member type -1: neither of Kafka's protocols);
// each with the partitions it holds (Assignment) and its share of the
// group's assignment (TargetAssignment). The state is Empty without
// members, Stable when every member holds exactly its share, else
// Reconciling; the group epoch and assignment epoch are the highest
// member epoch. A group with committed offsets only is Empty. A group of
// the classic protocol over the wire, or one the store does not know,
// is GROUP_ID_NOT_FOUND. There is no client host, as in DescribeGroups.
func handleConsumerGroupDescribe(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ConsumerGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	var known []string
	for _, name := range req.Groups {
		g := kmsg.NewConsumerGroupDescribeResponseGroup()
		g.Group = name
		if req.IncludeAuthorizedOperations {
			g.AuthorizedOperations = groupOps
		}
		switch {
		case name == "":
			g.ErrorCode = errInvalidGroupID
		case srv.classicGroup(name):
			g.ErrorCode = errGroupIDNotFound
			msg := "Group " + name + " is not a consumer group."
			g.ErrorMessage = &msg
		default:
			members := srv.store.GroupMembers(name)
			if len(members) == 0 {
				if known == nil {
					known = srv.store.Groups()
				}
				if !slices.Contains(known, name) {
					g.ErrorCode = errGroupIDNotFound
					msg := "Group " + name + " not found."
					g.ErrorMessage = &msg
					break
				}
			}
			srv.describeConsumerGroup(&g, members)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}

// classicGroup reports whether name is a classic group of wire clients
// with members.
func (srv *Server) classicGroup(name string) bool {
	gs := &srv.groups
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.groupLocked(name)
	return g != nil && (len(g.members) > 0 || len(g.pending) > 0)
}

// describeConsumerGroup fills g with members, the store's members of its
// group.
func (srv *Server) describeConsumerGroup(g *kmsg.ConsumerGroupDescribeResponseGroup, members []strata.GroupMember) {
	wire := map[string]consumerMember{}
	cs := &srv.consumers
	if cg := cs.lockGroup(g.Group, false); cg != nil {
		for _, m := range cg.members {
			wire[m.coordID] = *m
		}
		cs.unlockGroup(cg)
	}
	g.State, g.AssignorName = "Empty", "range"
	if len(members) > 0 {
		g.State = "Stable"
	}
	for _, m := range members {
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID, dm.MemberEpoch = m.ID, int32(m.Generation)
		dm.SubscribedTopics = m.Topics
		if w, ok := wire[m.ID]; ok {
			dm.MemberID, dm.ClientID, dm.MemberType = w.id, w.clientID, 1
			dm.SubscribedTopics = w.names
			if w.instanceID != "" {
				dm.InstanceID = &w.instanceID
			}
			if w.rackID != "" {
				dm.RackID = &w.rackID
			}
			if w.regexSrc != "" {
				dm.SubscribedTopicRegex = &w.regexSrc
			}
		}
		if dm.SubscribedTopics == nil {
			dm.SubscribedTopics = []string{}
		}
		dm.Assignment = srv.describedAssignment(m.Owned)
		dm.TargetAssignment = srv.describedAssignment(m.Assigned)
		if !slices.Equal(m.Owned, m.Assigned) {
			g.State = "Reconciling"
		}
		g.Epoch = max(g.Epoch, dm.MemberEpoch)
		g.Members = append(g.Members, dm)
	}
	g.AssignmentEpoch = g.Epoch
}

// describedAssignment is parts (sorted by topic) as a described
// member's assignment, each topic with its name and id.
func (srv *Server) describedAssignment(parts []strata.TopicPartition) kmsg.Assignment {
	a := kmsg.NewAssignment()
	a.TopicPartitions = []kmsg.AssignmentTopicPartition{}
	for topic, ps := range byTopic(parts) {
		at := kmsg.NewAssignmentTopicPartition()
		at.Topic, at.Partitions = topic, ps
		if d, err := srv.store.DescribeTopic(topic); err == nil {
			at.TopicID = [16]byte(d.ID)
		}
		a.TopicPartitions = append(a.TopicPartitions, at)
	}
	return a
}
