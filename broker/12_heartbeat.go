package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// handleHeartbeat keeps a member of a classic group alive for another
// session timeout (one that sends none for that long is evicted and the
// group rebalances), and tells it when the group rebalances
// (REBALANCE_IN_PROGRESS: it joins again), as Kafka's
// GroupCoordinator.handleHeartbeat does: UNKNOWN_MEMBER_ID for a member
// the group does not know, FENCED_INSTANCE_ID for an instance id of
// another member, ILLEGAL_GENERATION for another generation.
func handleHeartbeat(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.HeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	if req.Group == "" {
		resp.ErrorCode = errInvalidGroupID
		return resp, nil
	}
	gs := &srv.groups
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.groupLocked(req.Group)
	if g == nil {
		resp.ErrorCode = errUnknownMemberID
		return resp, nil
	}
	if resp.ErrorCode = g.checkMemberLocked(req.MemberID, str(req.InstanceID)); resp.ErrorCode != errNone {
		return resp, nil
	}
	if req.Generation != g.generation {
		resp.ErrorCode = errIllegalGeneration
		return resp, nil
	}
	m := g.members[req.MemberID]
	if m.join == nil && m.sync == nil {
		g.beatLocked(m)
	}
	if g.state == groupPreparingRebalance {
		resp.ErrorCode = errRebalanceInProgress
	}
	return resp, nil
}
