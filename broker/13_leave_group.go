package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// handleLeaveGroup removes members from a classic group, which
// rebalances the others, as Kafka's GroupCoordinator.handleLeaveGroup
// does: one member (v0-v2) or several (v3+, KIP-345), by member id or by
// instance id (FENCED_INSTANCE_ID when both are given and the instance
// is another member's). A member the group does not know is
// UNKNOWN_MEMBER_ID.
func handleLeaveGroup(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.LeaveGroupRequest)
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	if req.Group == "" {
		resp.ErrorCode = errInvalidGroupID
		return resp, nil
	}
	gs := &srv.groups
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.groupLocked(req.Group)
	if req.Version < 3 {
		resp.ErrorCode = errUnknownMemberID
		if g != nil {
			resp.ErrorCode = g.leaveLocked(req.MemberID, "")
		}
		return resp, nil
	}
	for _, rm := range req.Members {
		sm := kmsg.NewLeaveGroupResponseMember()
		sm.MemberID, sm.InstanceID = rm.MemberID, rm.InstanceID
		sm.ErrorCode = errUnknownMemberID
		if g != nil {
			sm.ErrorCode = g.leaveLocked(rm.MemberID, str(rm.InstanceID))
		}
		resp.Members = append(resp.Members, sm)
	}
	return resp, nil
}

// leaveLocked removes the member of memberID, or of instanceID if given
// (memberID may then be ""), and returns the code of its removal.
func (g *wireGroup) leaveLocked(memberID, instanceID string) int16 {
	if instanceID != "" {
		id, ok := g.static[instanceID]
		switch {
		case !ok:
			return errUnknownMemberID
		case memberID != "" && memberID != id:
			return errFencedInstanceID
		}
		memberID = id
	}
	if t, ok := g.pending[memberID]; ok {
		t.Stop()
		g.dropPendingLocked(memberID)
		g.maybeCompleteJoinLocked()
		g.releaseIfUnusedLocked()
		return errNone
	}
	m := g.members[memberID]
	if m == nil {
		return errUnknownMemberID
	}
	g.removeLocked(m, errUnknownMemberID)
	return errNone
}
