package broker

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// serverAssignors are the ServerAssignor names a member may ask for:
// Kafka's two (group.consumer.assignors). Either way the store's
// assignor (strata.Options.Assignor) assigns the group, which its own
// Consumers share.
var serverAssignors = []string{"uniform", "range"}

// handleConsumerGroupHeartbeat serves KIP-848's consumer group protocol
// (v0 with member ids the broker makes, v1 with the client's own and
// regex subscriptions) on the store's group coordinator
// (Store.HeartbeatGroup): a member's group is the store's group of that
// name, shared with the store's Consumers, whose coordinator assigns the
// partitions and moves them incrementally, a partition reaching its new
// owner only once its previous one no longer reports it (Kafka's
// reconciliation). The member epoch is the store's generation as of the
// member's last heartbeat; epoch 0 joins (or, with a known member id,
// re-joins in place, its assignment sent again), -1 leaves, and -2 leaves
// a static member (its assignment is freed at once: the store keeps no
// assignment for a static member to come back to). The session timeout
// is the store's (strata.Options.SessionTimeout), the heartbeat interval
// Options.GroupHeartbeatInterval.
//
// A group used by Kafka's classic protocol over the wire is
// GROUP_ID_NOT_FOUND (and a classic JoinGroup for a group with members
// of the store's coordinator, these included, is
// INCONSISTENT_GROUP_PROTOCOL). The errors are Kafka's
// (GroupMetadataManager.consumerGroupHeartbeat): INVALID_REQUEST for a
// request that breaks the protocol's rules, FENCED_MEMBER_EPOCH,
// UNKNOWN_MEMBER_ID (a member evicted after its session timeout too),
// UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, UNSUPPORTED_ASSIGNOR,
// INVALID_REGULAR_EXPRESSION, GROUP_MAX_SIZE_REACHED; a new member past
// maxWireMembers of all the groups together is COORDINATOR_NOT_AVAILABLE,
// which clients retry.
func handleConsumerGroupHeartbeat(srv *Server, h header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ConsumerGroupHeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.HeartbeatIntervalMillis = int32(srv.opts.GroupHeartbeatInterval.Milliseconds())
	if code, msg := srv.consumerHeartbeat(req, resp, h.clientID, h.host); code != errNone {
		*resp = *req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
	}
	return resp, nil
}

// checkHeartbeat is Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid:
// the code and message for a request that breaks the protocol's rules.
func checkHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) (int16, string) {
	switch {
	case req.Group == "":
		return errInvalidGroupID, "GroupId can't be empty."
	case req.Version >= 1 && req.MemberID == "":
		return errInvalidRequest, "MemberId can't be empty."
	case req.InstanceID != nil && *req.InstanceID == "":
		return errInvalidRequest, "InstanceId can't be empty."
	case req.RackID != nil && *req.RackID == "":
		return errInvalidRequest, "RackId can't be empty."
	case req.MemberEpoch < -2:
		return errInvalidRequest, "MemberEpoch is invalid."
	case req.MemberEpoch == -2 && req.InstanceID == nil:
		return errInvalidRequest, "InstanceId can't be null."
	case req.MemberEpoch > 0 && req.MemberID == "":
		return errInvalidRequest, "MemberId can't be empty."
	case req.MemberEpoch == 0 && req.RebalanceTimeoutMillis == -1:
		return errInvalidRequest, "RebalanceTimeoutMs must be provided in first request."
	case req.MemberEpoch == 0 && len(req.Topics) > 0:
		return errInvalidRequest, "TopicPartitions must be empty when (re-)joining."
	case req.MemberEpoch == 0 && req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil:
		return errInvalidRequest, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
	case req.ServerAssignor != nil && !slices.Contains(serverAssignors, *req.ServerAssignor):
		return errUnsupportedAssignor, fmt.Sprintf("ServerAssignor %q is not supported; supported assignors: %v.", *req.ServerAssignor, serverAssignors)
	}
	return errNone, ""
}

// consumerHeartbeat runs one heartbeat, filling resp; it returns the
// error code and message if it fails.
func (srv *Server) consumerHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse, clientID, host string) (int16, string) {
	if code, msg := checkHeartbeat(req); code != errNone {
		return code, msg
	}
	cs := &srv.consumers
	g := cs.lockGroup(req.Group, req.MemberEpoch == 0)
	if g == nil {
		if req.MemberEpoch < 0 {
			return errUnknownMemberID, ""
		}
		return errUnknownMemberID, fmt.Sprintf("member %s is not a member of group %s", req.MemberID, req.Group)
	}
	defer cs.unlockGroup(g)
	m := g.members[req.MemberID]
	if req.MemberEpoch < 0 {
		// Kafka's consumerGroupLeave: without an instance id, the member
		// of the id leaves, a static one too; with one, the static
		// member of that instance must be the member of the id.
		if req.InstanceID != nil {
			switch sm := g.static[*req.InstanceID]; {
			case sm == nil:
				return errUnknownMemberID, ""
			case sm != m:
				return errFencedInstanceID, ""
			}
		}
		if m == nil {
			return errUnknownMemberID, ""
		}
		g.removeLocked(m)
		if err := srv.store.LeaveGroup(g.name, m.coordID); err != nil && heartbeatCode(err) != errUnknownMemberID {
			return heartbeatCode(err), err.Error()
		}
		id := m.id
		resp.MemberID, resp.MemberEpoch = &id, req.MemberEpoch
		return errNone, ""
	}
	if m == nil && req.MemberEpoch == 0 {
		// Forget the members the store evicted, whose instance ids are
		// free again and who do not count towards the group's size.
		g.pruneLocked(srv.store)
	}
	if req.InstanceID != nil {
		if sm := g.static[*req.InstanceID]; sm != nil && sm != m {
			if req.MemberEpoch == 0 {
				return errUnreleasedInstanceID, fmt.Sprintf("static member %s with instance id %s is still in group %s", sm.id, *req.InstanceID, g.name)
			}
			return errFencedInstanceID, ""
		}
	}
	if m == nil {
		if req.MemberEpoch != 0 {
			return errUnknownMemberID, fmt.Sprintf("member %s is not a member of group %s", req.MemberID, req.Group)
		}
		switch {
		case len(g.members) >= maxGroupSize:
			return errGroupMaxSizeReached, ""
		case cs.members.Load() >= int64(maxWireMembers):
			return errCoordinatorNotAvailable, ""
		}
		id := req.MemberID
		if id == "" { // v0: the broker names the member
			id = newMemberID("")[1:]
		}
		m = &consumerMember{id: id, clientID: clientID, clientHost: host}
		cs.armSweep(srv.store)
	} else if code := srv.checkEpoch(m, req); code != errNone {
		return code, ""
	}
	return srv.heartbeatMember(g, m, req, resp)
}

// checkEpoch is Kafka's throwIfMemberEpochIsInvalid: a member must send
// its member epoch, or the previous one with the partitions it owns, all
// of them of its assignment (a member that lost the response that moved
// it on); epoch 0 re-joins.
func (srv *Server) checkEpoch(m *consumerMember, req *kmsg.ConsumerGroupHeartbeatRequest) int16 {
	switch req.MemberEpoch {
	case 0, m.epoch:
		return errNone
	case m.prevEpoch:
		if req.Topics == nil {
			break
		}
		for _, tp := range srv.ownedPartitions(req.Topics) {
			if !slices.Contains(m.assigned, tp) {
				return errFencedMemberEpoch
			}
		}
		return errNone
	}
	return errFencedMemberEpoch
}

// heartbeatMember runs the heartbeat of m (new or known) in the store
// and fills resp. The caller holds g.mu.
func (srv *Server) heartbeatMember(g *consumerGroup, m *consumerMember, req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) (int16, string) {
	names, regex := m.names, m.regex
	if req.SubscribedTopicNames != nil {
		names = slices.Clone(req.SubscribedTopicNames)
		slices.Sort(names)
		names = slices.Compact(names)
	}
	regexSrc := m.regexSrc
	if req.SubscribedTopicRegex != nil {
		regex, regexSrc = nil, *req.SubscribedTopicRegex
		if regexSrc != "" {
			re, err := compileRegex(regexSrc)
			if err != nil {
				return errInvalidRegularExpression, err.Error()
			}
			regex = re
		}
	}
	next := *m
	next.names, next.regex, next.regexSrc = names, regex, regexSrc
	if req.RackID != nil {
		next.rackID = *req.RackID
	}
	next.subscribed = next.subscription(srv.store)
	if req.InstanceID != nil {
		next.instanceID = *req.InstanceID
	}

	hb := strata.GroupHeartbeat{MemberID: m.coordID, ClientID: m.clientID, ClientHost: m.clientHost}
	if hb.MemberID == "" || !slices.Equal(next.subscribed, m.subscribed) {
		hb.Topics = next.subscribed
	}
	switch {
	case req.MemberEpoch == 0:
		hb.Owned = []strata.TopicPartition{}
	case req.Topics != nil:
		hb.Owned = srv.ownedPartitions(req.Topics)
	}
	a, err := srv.store.HeartbeatGroup(g.name, hb)
	if err != nil && hb.MemberID != "" && req.MemberEpoch == 0 && heartbeatCode(err) == errUnknownMemberID {
		// A member the store evicted re-joins as a new one.
		hb = strata.GroupHeartbeat{Topics: next.subscribed, ClientID: m.clientID}
		a, err = srv.store.HeartbeatGroup(g.name, hb)
	}
	if err != nil {
		if heartbeatCode(err) == errUnknownMemberID {
			g.removeLocked(m)
		}
		return heartbeatCode(err), err.Error()
	}
	next.coordID, next.gen = a.MemberID, a.Generation
	// A member that holds partitions to give back keeps its epoch, as
	// Kafka's CurrentAssignmentBuilder keeps a member in
	// UNREVOKED_PARTITIONS at its epoch: its commits of them, at that
	// epoch, still count (a client retries a STALE_MEMBER_EPOCH commit at
	// a new epoch only for the partitions it keeps).
	if epoch := int32(a.Generation); epoch != next.epoch && len(a.Revoking) == 0 {
		next.prevEpoch, next.epoch = next.epoch, epoch
	}
	send := req.MemberEpoch == 0 || req.Topics != nil || !next.sent || !slices.Equal(a.Assigned, next.assigned)
	next.assigned, next.sent = a.Assigned, true
	*m = next
	g.putLocked(m)
	if m.instanceID != "" {
		g.static[m.instanceID] = m
	}

	id := m.id
	resp.MemberID, resp.MemberEpoch = &id, m.epoch
	if send {
		resp.Assignment = srv.assignment(a.Assigned)
	}
	return errNone, ""
}

// ownedPartitions returns the partitions of a heartbeat's Topics (by
// topic id), skipping ids the store does not know; never nil.
func (srv *Server) ownedPartitions(topics []kmsg.ConsumerGroupHeartbeatRequestTopic) []strata.TopicPartition {
	out := []strata.TopicPartition{}
	if len(topics) == 0 {
		return out
	}
	byID := srv.topicIDs()
	for _, t := range topics {
		name, ok := byID[t.TopicID]
		if !ok {
			continue
		}
		for _, p := range t.Partitions {
			out = append(out, strata.TopicPartition{Topic: name, Partition: int(p)})
		}
	}
	return out
}

// assignment is a heartbeat response's Assignment of parts (sorted by
// topic), naming each topic by its id.
func (srv *Server) assignment(parts []strata.TopicPartition) *kmsg.ConsumerGroupHeartbeatResponseAssignment {
	a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
	a.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
	for topic, ps := range byTopic(parts) {
		if d, err := srv.store.DescribeTopic(topic); err == nil {
			at := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			at.TopicID, at.Partitions = [16]byte(d.ID), ps
			a.Topics = append(a.Topics, at)
		}
	}
	return &a
}
